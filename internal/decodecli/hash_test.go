package decodecli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/errtrail/errtrail/redact"
)

func TestRunHashPrintsTheStoredHash(t *testing.T) {
	key := filepath.Join(t.TempDir(), "k")
	os.WriteFile(key, []byte("0123456789abcdef0123\n"), 0o600)
	var out, errb bytes.Buffer
	if code := RunHash([]string{"--redact.key-file", key, "alice@example.com", "req-1"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	r := redact.New([]byte("0123456789abcdef0123"))
	want := r.Lookup("alice@example.com") + "\n" + r.Lookup("req-1") + "\n"
	if out.String() != want {
		t.Fatalf("got %q; want %q", out.String(), want)
	}
	if strings.Contains(out.String()+errb.String(), "alice") {
		t.Fatal("the value itself was printed")
	}
}

func TestRunHashWithoutKeyFails(t *testing.T) {
	var out, errb bytes.Buffer
	if code := RunHash([]string{"--redact.key-file", filepath.Join(t.TempDir(), "none"), "x"}, &out, &errb); code != 2 || out.Len() != 0 {
		t.Fatalf("exit %d, output %q; want 2 and nothing printed", code, out.String())
	}
}
