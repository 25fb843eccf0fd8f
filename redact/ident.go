package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
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
	mac     hash.Hash
	sum     []byte
	scratch []byte
	hashed  []byte
	out     []byte
	memo    memo
}

// New returns a Redactor whose hashes are keyed with key. The key must be
// the same for every ingester and lookup of one deployment, and must never
// be stored with the rows. An empty key still replaces values, with hashes
// anyone can recompute: for tests and local decoding only.
func New(key []byte) *Redactor {
	r := &Redactor{mac: hmac.New(sha256.New, key), sum: make([]byte, 0, sha256.Size), scratch: make([]byte, 0, 256)}
	r.memo.init()
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
	r.scratch, changed = AppendText(r.scratch[:0], s)
	return !changed
}

// Lookup returns the hash that replaced value in an identifier field, so a
// support lookup by the value a customer holds finds the row.
func (r *Redactor) Lookup(value string) string {
	return string(r.appendHash(nil, value))
}

// AppendHash appends the keyed hash of s, whatever s is: for values that
// are only compared, never read (idempotency keys).
func (r *Redactor) AppendHash(dst []byte, s string) []byte { return r.appendHash(dst, s) }

// Hash returns the keyed hash of s through the memo (the attempts of one
// request repeat its idempotency key); the result is valid until the next
// call on r.
func (r *Redactor) Hash(s string) string {
	slot, hit := r.memo.find(s, kindHash)
	if hit {
		return bstr(slot.out)
	}
	r.hashed = r.appendHash(r.hashed[:0], s)
	r.memo.store(slot, s, kindHash, false, r.hashed)
	return bstr(r.hashed)
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

// randomLooking reports a run of eight or more letters and digits that
// mixes upper case, lower case and digits and changes between them at
// least every other byte (Kq3vZ8pLw2): a short key or password, not a name
// (SendMessage2), a ULID (upper case only) or a hex id (no upper case).
func randomLooking(s string) bool {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isAlnum(s[i]) {
			continue
		}
		if i-start >= 8 && mixedRun(s[start:i]) {
			return true
		}
		start = i + 1
	}
	return false
}

func mixedRun(w string) bool {
	up, lo, dig, changes := 0, 0, 0, 0
	prev := byte(0)
	for i := 0; i < len(w); i++ {
		var k byte
		switch c := w[i]; {
		case c >= 'A' && c <= 'Z':
			up++
			k = 1
		case c >= 'a' && c <= 'z':
			lo++
			k = 2
		default:
			dig++
			k = 3
		}
		if i > 0 && k != prev {
			changes++
		}
		prev = k
	}
	return up > 0 && lo > 0 && dig > 0 && 2*changes >= len(w)
}

// scanIdent looks at an identifier once. random reports a short random
// key in it (randomLooking); plain reports that no detector of the text
// pass can match, so the pass is not needed: no '@', '%' or '=', no secret
// name before a ':', no word that starts like a provider key, a JWT or an
// IBAN, no run of 7 or more digits (cards, phones), and not long enough
// with upper case, lower case and digits for a random string.
func scanIdent(s string) (plain, random bool) {
	if isUUID(s) {
		return true, false // the commonest id: hex groups, no detector can match
	}
	plain = true
	var acc, run uint8 // classes seen in s, and in the current run of letters and digits
	digits, start, runStart := 0, 0, 0
	counting := false
	prev := idSep
	for i := 0; i <= len(s); i++ {
		f := idSep // the end of s ends the last run
		if i < len(s) {
			f = idClass[s[i]]
		}
		acc |= f
		if f&(idDigit|idUpper|idLower) != 0 {
			if run == 0 {
				runStart = i
			}
			run |= f
		} else if run != 0 {
			if run == idDigit|idUpper|idLower && i-runStart >= 8 && mixedRun(s[runStart:i]) {
				random = true
			}
			run = 0
		}
		switch {
		case f == idDigit:
			if prev != idDigit && !(prev == idSep && digits > 0) {
				// A new number: it counts only where the text pass would
				// see one, not glued to a word (uuid groups, req_0123…).
				digits = 0
				counting = i == 0 || prev == idColon || prev == idSep && (i < 2 || idClass[s[i-2]]&(idDigit|idUpper|idLower|idUnder) == 0)
			}
			digits++
			if digits >= 7 && counting {
				plain = false
			}
		case f&(idUpper|idLower) != 0:
			digits = 0
			if prev&(idSep|idColon) != 0 && len(s)-i >= 14 && plain && wordLooksKey(s[i:]) {
				plain = false
			}
		case f == idSep:
			if prev != idDigit || i+1 >= len(s) || idClass[s[i+1]] != idDigit {
				digits = 0 // 0151/123…, 4111-1111-… run on
			}
		case f == idColon:
			if secretName(s[start:i]) != nameNone {
				plain = false
			}
			start, digits = i+1, 0
		case f == idRare:
			plain = false
		default: // '_'
			digits = 0
		}
		prev = f
	}
	if acc&(idUpper|idLower|idDigit) == idUpper|idLower|idDigit && len(s) >= 32 {
		plain = false
	}
	return plain, random
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
