package api

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// maxTokenFile bounds the token file read: a file this large is a mistake.
const maxTokenFile = 1 << 20

// tokens is the set of accepted bearer tokens, as SHA-256 digests: the
// tokens themselves are never kept, logged or compared. Comparing digests
// makes every comparison the same length, and check compares the presented
// digest with every accepted one without stopping early, so neither the
// length of a token nor which one matched shows in the timing.
type tokens struct {
	file   string        // "" when the tokens come from the variable only
	reload time.Duration // 0: the file is read once
	fixed  [][32]byte    // from the variable, never reloaded

	mu       sync.Mutex
	fromFile [][32]byte
	checked  time.Time // when the file was last read
	onReload func(err error, n int)
}

// newTokens reads the file and the variable named env. It returns nil when
// neither is configured (auth off), and an error when a configured source
// cannot be read or when together they hold no token: an API that was
// asked for auth must not start open, nor closed to everyone.
func newTokens(file, env string, reload time.Duration, now time.Time) (*tokens, error) {
	if file == "" && env == "" {
		return nil, nil
	}
	t := &tokens{file: file, reload: reload, checked: now}
	if env != "" {
		v, ok := os.LookupEnv(env)
		if !ok {
			return nil, fmt.Errorf("--auth.tokens-env: variable %s is not set", env)
		}
		t.fixed = digests(strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }))
	}
	if file != "" {
		d, err := readTokenFile(file)
		if err != nil {
			return nil, fmt.Errorf("--auth.token-file: %w", err)
		}
		t.fromFile = d
	}
	if len(t.fixed)+len(t.fromFile) == 0 {
		return nil, errors.New("auth is enabled but --auth.token-file and --auth.tokens-env hold no token")
	}
	return t, nil
}

// readTokenFile returns the digests of the file's tokens: one per line,
// surrounding white space trimmed, blank lines and '#' lines skipped. Errors
// name the file and the line number, never a line's content.
func readTokenFile(path string) ([][32]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxTokenFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxTokenFile)
	}
	var toks []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxTokenFile)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, " \t") {
			return nil, fmt.Errorf("%s:%d: a token cannot contain white space", path, n)
		}
		toks = append(toks, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return digests(toks), nil
}

func digests(toks []string) [][32]byte {
	out := make([][32]byte, 0, len(toks))
	for _, s := range toks {
		if s != "" {
			out = append(out, sha256.Sum256([]byte(s)))
		}
	}
	return out
}

// check reports whether token is accepted, re-reading the file first when
// the reload interval has passed. A file that cannot be read keeps the
// tokens last read (and onReload hears of it); a file read without tokens
// accepts none of its former tokens: emptying the file revokes them.
func (t *tokens) check(token string, now time.Time) bool {
	d := sha256.Sum256([]byte(token))
	t.mu.Lock()
	if t.file != "" && t.reload > 0 && now.Sub(t.checked) >= t.reload {
		t.checked = now
		nd, err := readTokenFile(t.file)
		if err == nil {
			t.fromFile = nd
		}
		if t.onReload != nil {
			t.onReload(err, len(nd))
		}
	}
	fromFile := t.fromFile
	t.mu.Unlock()
	ok := 0
	for _, set := range [][][32]byte{t.fixed, fromFile} {
		for i := range set {
			ok |= subtle.ConstantTimeCompare(d[:], set[i][:])
		}
	}
	return ok == 1
}

// bearer returns the token of an "Authorization: Bearer TOKEN" header
// (scheme case-insensitive, RFC 9110 §11.1), and false without one.
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}
