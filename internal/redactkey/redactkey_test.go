package redactkey

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoadCreatesOnceAndKeeps(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "redact.key")
	k1, used, created, err := Load(p, true)
	if err != nil || !created || used != p || len(k1) != 64 {
		t.Fatalf("first load: key %d bytes, created %v, used %q, err %v", len(k1), created, used, err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, err %v; want 0600", st.Mode().Perm(), err)
	}
	k2, _, created, err := Load(p, true)
	if err != nil || created || string(k2) != string(k1) {
		t.Fatalf("second load: created %v, same key %v, err %v; want the first key, not a new one", created, string(k1) == string(k2), err)
	}
}

func TestLoadRefusesMissingAndShort(t *testing.T) {
	dir := t.TempDir()
	if _, _, _, err := Load(filepath.Join(dir, "none"), false); err == nil {
		t.Fatal("a missing key file without create gave no error")
	}
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abc\n"), 0o600)
	if _, _, _, err := Load(short, true); err == nil {
		t.Fatal("a 3-byte key was accepted")
	}
}

func TestDefaultPathFollowsXDG(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/var/lib/x")
	if got := DefaultPath(); got != "/var/lib/x/errtrail/redact.key" {
		t.Fatalf("DefaultPath() = %q", got)
	}
}
