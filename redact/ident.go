package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"github.com/errtrail/errtrail/internal/keep"
	"hash"
	"strings"
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
	k0, k1  uint64 // SipHash key for Hash64, derived from the deployment key
	mac     hash.Hash
	sum     []byte
	scratch []byte
	hashed  []byte
	out     []byte
	memo    memo
	// textView is r.text, bound once: the text pass keep's path and
	// endpoint rules call.
	textView keep.TextView
	work     int // the text passes' work so far (Work)
}

// AppendText is the package's AppendText, with its work counted (Work).
func (r *Redactor) AppendText(dst []byte, s string) ([]byte, bool) {
	out, changed, w := appendText(dst, s)
	r.work += w
	return out, changed
}

// Work reports the work of every text pass r has made so far (AppendText,
// Raw, and those of identifiers, paths and endpoints): the bytes the
// detectors examined. It is a deterministic measure of the redactor's
// cost, which grows linearly with the length of the texts whatever they
// hold; tests and benchmarks hold it to a fixed multiple of that length.
func (r *Redactor) Work() int { return r.work }

// New returns a Redactor whose hashes are keyed with key. The key must be
// the same for every ingester and lookup of one deployment, and must never
// be stored with the rows. An empty key still replaces values, with hashes
// anyone can recompute: for tests and local decoding only.
func New(key []byte) *Redactor {
	r := &Redactor{mac: hmac.New(sha256.New, key), sum: make([]byte, 0, sha256.Size), scratch: make([]byte, 0, 256)}
	r.textView = r.text
	r.memo.init()
	// Hash64's key: the first 16 bytes of the deployment key's HMAC of a
	// label no stored value can equal (it starts with a NUL byte).
	r.mac.Reset()
	r.mac.Write([]byte("\x00errtrail hash64 key"))
	var kk [16]byte
	copy(kk[:], r.mac.Sum(nil))
	r.k0, r.k1 = binary.LittleEndian.Uint64(kk[:8]), binary.LittleEndian.Uint64(kk[8:])
	return r
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
	if isHash(s) {
		return true // a hash already (an emitter redacted at the source)
	}
	plain, random := scanIdent(s)
	if random {
		return false
	}
	if plain && (g == ID || strings.IndexByte(s, ' ') < 0) {
		return true // a space could follow an authentication scheme
	}
	var changed bool
	r.scratch, changed = r.AppendText(r.scratch[:0], s)
	return !changed
}

// Lookup returns the hash that replaced value in an identifier field, so a
// support lookup by the value a customer holds finds the row.
func (r *Redactor) Lookup(value string) string {
	return string(r.appendHash(nil, value))
}

// Hash64 returns a keyed 64-bit hash of s (SipHash-2-4 under a key derived
// from the deployment key), never 0: for values that are only compared for
// equality, such as idempotency keys. It allocates nothing.
func (r *Redactor) Hash64(s string) uint64 {
	if h := sipHash24(r.k0, r.k1, sbytes(s)); h != 0 {
		return h
	}
	return 1
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

// randomLooking reports a short random key or password (keep.RandomLooking).
func randomLooking(s string) bool { return keep.RandomLooking(s) }

// scanIdent looks at an identifier once. random reports a short random
// key in it (randomLooking); plain reports that no detector of the text
// pass can match, so the pass is not needed: no '@', '%' or '=', no secret
// name before a ':', no word that starts like a provider key, a JWT or an
// IBAN, no run of 7 or more digits (cards, phones), no SSN (dashed, or
// nine digits with a label word), and not long enough
// with upper case, lower case and digits for a random string.
func scanIdent(s string) (plain, random bool) {
	if isUUID(s) {
		return true, false // the commonest id: hex groups, no detector can match
	}
	// One tight pass for the classes present and the digits; the checks
	// below run only when those make them possible.
	var acc uint8
	digits := 0
	for i := 0; i < len(s); i++ {
		f := idClass[s[i]]
		acc |= f
		digits += int(f>>1) & 1 // idDigit
	}
	const all3 = idUpper | idLower | idDigit
	if acc&all3 == all3 {
		random = randomLooking(s)
		if len(s) >= 32 {
			return false, random // long enough for a random key: the text pass looks
		}
	}
	switch {
	case acc&idRare != 0:
		return false, random
	case digits >= 7 && digitRun7(s):
		return false, random
	case digits >= 9 && ssnInIdent(s):
		return false, random // user-536-22-8147, ssn-536228147 (ssn.go)
	case acc&idColon != 0 && colonSecret(s):
		return false, random
	case acc&(idUpper|idLower) != 0 && len(s) >= 14 && keyWord(s):
		return false, random
	}
	return true, random
}

// digitRun7 reports a number of seven or more digits, single separators
// between them allowed, that starts where the text pass would see a
// number: not glued to a word (uuid groups, req_0123… do not count).
func digitRun7(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			continue
		}
		if i > 0 {
			p := idClass[s[i-1]]
			if p == idDigit || p&(idUpper|idLower|idUnder) != 0 ||
				p == idSep && i >= 2 && idClass[s[i-2]]&(idDigit|idUpper|idLower|idUnder) != 0 {
				continue // inside a number, or glued to a word
			}
		}
		n, j := 0, i
		for j < len(s) {
			if isDigit(s[j]) {
				n++
				j++
				continue
			}
			if idClass[s[j]] == idSep && j+1 < len(s) && isDigit(s[j+1]) {
				j++ // 0151/123…, 4111-1111-… run on
				continue
			}
			break
		}
		if n >= 7 {
			return true
		}
		i = j
	}
	return false
}

// colonSecret reports a secret name before a ':' (token:abc).
func colonSecret(s string) bool {
	start := 0
	for {
		c := strings.IndexByte(s[start:], ':')
		if c < 0 {
			return false
		}
		if secretName(s[start:start+c]) != nameNone {
			return true
		}
		start += c + 1
	}
}

// keyWord reports a word, 14 or more bytes from the end, that starts like
// a provider key, a JWT or an IBAN.
func keyWord(s string) bool {
	for i := 0; i+14 <= len(s); i++ {
		if (i == 0 || idClass[s[i-1]]&(idSep|idColon) != 0) && isLetter(s[i]) && wordLooksKey(s[i:]) {
			return true
		}
	}
	return false
}

// wordLooksKey reports a word that starts like a provider key, a JWT or an
// IBAN.
func wordLooksKey(w string) bool {
	c := w[0]
	return hasKeyPrefix(w) || c == 'e' && strings.HasPrefix(w, "eyJ") ||
		isUpper(c) && isUpper(w[1]) && isDigit(w[2]) && isDigit(w[3])
}

// Byte classes for scanIdent.
const (
	idSep   uint8 = 1 << iota // - . / + ~ # space and the rest
	idDigit                   // 0-9
	idUpper                   // A-Z
	idLower                   // a-z
	idUnder                   // _
	idColon                   // :
	idRare                    // @ % =: the text pass must look
)

var idClass = func() (t [256]uint8) {
	for c := range t {
		t[c] = idSep
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = idDigit
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = idUpper
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = idLower
	}
	t['_'], t[':'], t['@'], t['%'], t['='] = idUnder, idColon, idRare, idRare, idRare
	return
}()

func hasKeyPrefix(s string) bool {
	for _, k := range keyByFirst[s[0]] {
		if len(s) >= len(k.prefix) && s[:len(k.prefix)] == k.prefix {
			return true
		}
	}
	return false
}

// isHash reports a value that is exactly one of our hashes.
func isHash(s string) bool {
	if len(s) != len(HashPrefix)+hashHex || s[:len(HashPrefix)] != HashPrefix {
		return false
	}
	for i := len(HashPrefix); i < len(s); i++ {
		if c := s[i]; !isDigit(c) && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// IdentOnce is Ident without the memo, for values that do not repeat
// (request, message and event ids): a miss in the memo costs more than the
// check itself.
func (r *Redactor) IdentOnce(s string, g Grammar) (out string, keep bool) {
	if s == "" || r.Keep(s, g) {
		return s, true
	}
	r.hashed = r.appendHash(r.hashed[:0], s)
	return bstr(r.hashed), false
}

// Ident returns what an identifier field of grammar g may store for s: s
// itself (keep true), or its keyed hash. The returned string is valid until
// the next call on r. Verdicts are remembered (memo.go), so the values that
// repeat from one reply to the next — agents, callers, methods, codes — are
// checked once.
func (r *Redactor) Ident(s string, g Grammar) (out string, keep bool) {
	if s == "" {
		return s, true
	}
	if len(s) <= memoMin { // as cheap to check as to look up
		return r.IdentOnce(s, g)
	}
	slot, hit := r.memo.find(s, kindIdent+uint8(g))
	if hit {
		if slot.keep {
			return s, true
		}
		return bstr(slot.out), false
	}
	if r.Keep(s, g) {
		r.memo.store(slot, s, kindIdent+uint8(g), true, nil)
		return s, true
	}
	r.hashed = r.appendHash(r.hashed[:0], s)
	r.memo.store(slot, s, kindIdent+uint8(g), false, r.hashed)
	return bstr(r.hashed), false
}

// isUUID reports the canonical 8-4-4-4-12 hex form.
func isUUID(s string) bool {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	var bad uint8
	for i := 0; i < 36; i++ {
		bad |= hexClass[s[i]]
	}
	return bad == 0
}

// hexClass is 0 for hex digits and '-', 1 for anything else.
var hexClass = func() (t [256]uint8) {
	for c := range t {
		if !isHex(byte(c)) && c != '-' {
			t[c] = 1
		}
	}
	return
}()
