package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
)

// Identifiers have a grammar. A value that fits it and that no detector of
// the text pass flags is kept as it is, so ids stay searchable and rollup
// dimensions stay readable. Any other value is not stored: a keyed hash
// takes its place.

// HashPrefix starts every value that replaced an identifier: "hmac:" and
// 24 hex digits (96 bits of HMAC-SHA256 under the deployment key).
const HashPrefix = "hmac:"

const hashHex = 24

// Grammar is the shape an identifier field may have.
type Grammar uint8

const (
	// ID: 1 to 128 bytes of letters, digits and - _ . : / @ + ~ # =, no
	// spaces (error ids, request ids, task and message ids, callers).
	ID Grammar = iota
	// Name: an ID that may also hold single spaces and , ( ), for limit and
	// scope names ("60 requests per 60 s").
	Name
)

// MaxIdent is the longest identifier kept as it is.
const MaxIdent = 128

var idByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = isAlnum(b)
	}
	for _, c := range []byte("-_.:/@+~#=") {
		t[c] = true
	}
	return
}()

// fits reports whether s fits grammar g.
func fits(s string, g Grammar) bool {
	if len(s) == 0 || len(s) > MaxIdent {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if idByte[c] {
			continue
		}
		if g == Name && (c == ' ' && i > 0 && i < len(s)-1 && s[i-1] != ' ' || c == ',' || c == '(' || c == ')') {
			continue
		}
		return false
	}
	return true
}

// Redactor applies the rules that need a deployment key or scratch space:
// identifiers, field paths and endpoints. It is not safe for concurrent
// use; give each goroutine its own.
type Redactor struct {
	mac     hash.Hash
	sum     []byte
	scratch []byte
}

// New returns a Redactor whose hashes are keyed with key. The key must be
// the same for every ingester and lookup of one deployment, and must never
// be stored with the rows. An empty key still replaces values, with hashes
// anyone can recompute: for tests and local decoding only.
func New(key []byte) *Redactor {
	return &Redactor{mac: hmac.New(sha256.New, key), sum: make([]byte, 0, sha256.Size), scratch: make([]byte, 0, 256)}
}

// AppendIdent appends s to dst as identifier field of grammar g may store
// it: s itself when it fits the grammar and no detector flags it, else its
// keyed hash. replaced reports the second case.
func (r *Redactor) AppendIdent(dst []byte, s string, g Grammar) (out []byte, replaced bool) {
	if s == "" {
		return dst, false
	}
	if r.Keep(s, g) {
		return append(dst, s...), false
	}
	return r.appendHash(dst, s), true
}

// Keep reports whether s may be stored as it is in an identifier field of
// grammar g.
func (r *Redactor) Keep(s string, g Grammar) bool {
	if !fits(s, g) {
		return false
	}
	if len(s) > len(HashPrefix) && s[:len(HashPrefix)] == HashPrefix {
		return true // a hash already (an emitter redacted at the source)
	}
	var changed bool
	r.scratch, changed = AppendText(r.scratch[:0], s)
	return !changed
}

// Lookup returns the hash that replaced value in an identifier field, so a
// support lookup by the value a customer holds finds the row.
func (r *Redactor) Lookup(value string) string {
	return string(r.appendHash(nil, value))
}

func (r *Redactor) appendHash(dst []byte, s string) []byte {
	r.mac.Reset()
	r.mac.Write(sbytes(s))
	r.sum = r.mac.Sum(r.sum[:0])
	dst = append(dst, HashPrefix...)
	n := len(dst)
	dst = append(dst, make([]byte, hashHex)...)
	hex.Encode(dst[n:], r.sum[:hashHex/2])
	return dst
}
