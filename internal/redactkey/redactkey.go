// Package redactkey loads the deployment key that keys the hashes replacing
// identifier values (package redact). Every ingester and every support
// lookup of one deployment must use the same key, and the key never reaches
// ClickHouse, a log line or a metric.
//
// The key lives in a file: --redact.key-file (ERRTRAIL_REDACT_KEY_FILE),
// or, when none is named, DefaultPath. Load with create set makes the file
// with 32 random bytes (hex, mode 0600) when it does not exist yet, so a
// single machine works without setup and keeps its hashes across restarts;
// a deployment with several ingesters names one shared file instead.
package redactkey

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MinBytes is the shortest key accepted.
const MinBytes = 16

// DefaultPath is where the key is kept when no file is named:
// $XDG_STATE_HOME/errtrail/redact.key, or ~/.local/state/errtrail/redact.key.
func DefaultPath() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "errtrail", "redact.key")
}

// Load reads the key from path (DefaultPath when empty). With create, a
// missing file is made with a new random key, and created reports it.
func Load(path string, create bool) (key []byte, used string, created bool, err error) {
	if path == "" {
		path = DefaultPath()
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, path, false, fmt.Errorf("redaction key: %w", err)
		}
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return nil, path, false, fmt.Errorf("redaction key: %w", err)
		}
		b = []byte(hex.EncodeToString(raw) + "\n")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) { // another process made it first
			return Load(path, false)
		}
		if err != nil {
			return nil, path, false, fmt.Errorf("redaction key: %w", err)
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			return nil, path, false, fmt.Errorf("redaction key: %w", err)
		}
		if err := f.Close(); err != nil {
			return nil, path, false, fmt.Errorf("redaction key: %w", err)
		}
		created = true
	} else if err != nil {
		return nil, path, false, fmt.Errorf("redaction key: %w", err)
	}
	key = bytes.TrimSpace(b)
	if len(key) < MinBytes {
		return nil, path, false, fmt.Errorf("redaction key in %s: %d bytes, want at least %d", path, len(key), MinBytes)
	}
	return key, path, created, nil
}
