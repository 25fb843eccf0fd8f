package parse

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
	"unsafe"
)

// This file holds a small JSON reader built for error replies: validate a
// document once (syntax, nesting depth, UTF-8), then walk it by raw spans
// without building a tree. Nothing here allocates: strings without escapes
// are views of the input, escaped strings are unescaped into the Decoder's
// arena.

// JSON value kinds, by their first byte.
const (
	jNone   byte = 0
	jObject byte = '{'
	jArray  byte = '['
	jString byte = '"'
	jNumber byte = '0'
	jTrue   byte = 't'
	jFalse  byte = 'f'
	jNull   byte = 'n'
)

// jval is a validated JSON value: its kind, its raw bytes, and its place on
// the tape that was built while validating, so that walking it never scans
// bytes twice.
type jval struct {
	t    *tape
	i    int32 // index of this value's tape entry
	kind byte
}

// bytes returns the value's raw JSON text.
func (v jval) bytes() []byte {
	if v.t == nil {
		return nil
	}
	e := &v.t.ents[v.i]
	return v.t.data[e.start:e.end]
}

// inner returns a string value's contents without quotes, escapes kept.
func (v jval) inner() []byte {
	e := &v.t.ents[v.i]
	return v.t.data[e.start+1 : e.end-1]
}

func (v jval) ok() bool { return v.kind != jNone }

// tape is the flat, pre-order list of the values of one document: each
// object member contributes a key entry followed by its value's entries.
// next is the index just past an entry's subtree.
type tape struct {
	data []byte
	ents []tapeEnt
	// Escaped string values are unescaped while they are validated: their
	// contents go to unesc and the entry's span to spans, so reading them
	// later costs no second pass.
	unesc []byte
	spans []unescSpan
}

type unescSpan struct{ ent, start, end int32 }

type tapeEnt struct {
	start, end, next int32
	// keyStart and keyEnd span the member's key (quotes included) when the
	// value is an object member; they are not set (and never read) for an
	// array element or the root. Keeping the key in its value's entry
	// halves the entries of an object.
	keyStart, keyEnd int32
	kind             byte
	// plain marks a string the fast path accepted: no escapes (and ASCII
	// only), so reading it needs no unescaping.
	plain bool
}

// set writes the value's fields in place (a composite literal would be
// built on the stack and copied); a member's key fields were written when
// its key was read.
func (e *tapeEnt) set(start, end, next int32, kind byte, plain bool) {
	e.start, e.end, e.next = start, end, next
	e.kind, e.plain = kind, plain
}

func (t *tape) val(i int32) jval {
	return jval{t: t, i: i, kind: t.ents[i].kind}
}

func (t *tape) root() jval {
	if len(t.ents) == 0 {
		return jval{}
	}
	return t.val(0)
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// buildTape validates data — exactly one JSON value with surrounding white
// space, nesting at most maxDepth, UTF-8 strings — and records its tape. It
// returns "" when data is valid, else the reason and the byte offset of the
// first problem. The scan is iterative, with no recursion: the open
// containers form a chain through the tape itself (an open container's end
// field holds its parent's index until it closes), which leaves the few
// hot variables to the registers. Compact JSON, the common form, takes
// the fast paths: a byte that is not white space is tested for the
// expected punctuation before any white space is skipped.
func buildTape(t *tape, data []byte, maxDepth int) (ErrReason, int) {
	t.data = data
	if len(data) > 1<<31-1 {
		t.ents = t.ents[:0]
		return ErrTooLarge, 0
	}
	ents := t.ents[:cap(t.ents)]
	t.unesc, t.spans = t.unesc[:0], t.spans[:0]
	n := 0
	d := data
	p := skipWS(d, 0)
	var (
		c     byte
		end   int
		r     ErrReason
		top   int32 = -1 // innermost open container, -1 at the top level
		depth int
	)
value:
	// Room for this value's entry and, after a key, the next member's.
	if n+2 > len(ents) {
		ents = growTape(ents)
	}
	if p >= len(d) {
		return fail(t, ents, ErrInvalidJSON, p)
	}
	c = d[p]
	switch c {
	case '{', '[':
		if depth >= maxDepth {
			return fail(t, ents, ErrTooDeep, p)
		}
		depth++
		ents[n].set(int32(p), top, 0, c, false) // end: the parent, until the close
		top = int32(n)
		n++
		p = skipWS(d, p+1)
		if p < len(d) && d[p] == c+2 { // '}' is '{'+2, ']' is '['+2
			goto closeContainer
		}
		if c == '{' {
			goto key
		}
		goto value
	case '"':
		// The string fast path, inlined: a string with no escapes,
		// control or non-ASCII bytes ends at the first special byte.
		for end = p + 1; end+8 <= len(d); end += 8 {
			if m := specialWord(word(d, end)); m != 0 {
				if end += bits.TrailingZeros64(m) >> 3; d[end] == '"' {
					end++
					goto valueString
				}
				break
			}
		}
		if end, r = t.scanUnescape(d, p, int32(n)); r != "" {
			return fail(t, ents, r, end)
		}
		// plain when the special bytes were only non-ASCII letters
		ents[n].set(int32(p), int32(end), int32(n+1), jString, len(t.spans) == 0 || t.spans[len(t.spans)-1].ent != int32(n))
		goto stringDone
	valueString:
		ents[n].set(int32(p), int32(end), int32(n+1), jString, true)
	stringDone:
		n++
		p = end
	case 't', 'f', 'n':
		end = literalEnd(d, p)
		if end < 0 {
			return fail(t, ents, ErrInvalidJSON, p)
		}
		ents[n].set(int32(p), int32(end), int32(n+1), c, false)
		n++
		p = end
	default:
		end = scanNumber(d, p)
		if end < 0 {
			return fail(t, ents, ErrInvalidJSON, -end-1)
		}
		ents[n].set(int32(p), int32(end), int32(n+1), jNumber, false)
		n++
		p = end
	}

afterValue:
	if top < 0 {
		if p = skipWS(d, p); p != len(d) {
			return fail(t, ents, ErrInvalidJSON, p)
		}
		t.ents = ents[:n]
		return "", 0
	}
	if p >= len(d) {
		return fail(t, ents, ErrInvalidJSON, p)
	}
	if c = d[p]; c <= ' ' {
		if p = skipWS(d, p); p >= len(d) {
			return fail(t, ents, ErrInvalidJSON, p)
		}
		c = d[p]
	}
	if c == ',' {
		p++
		if ents[top].kind == jObject {
			goto key
		}
		p = skipWS(d, p)
		goto value
	}
	if c != ents[top].kind+2 {
		return fail(t, ents, ErrInvalidJSON, p)
	}

closeContainer:
	end = int(ents[top].end) // the parent
	ents[top].end = int32(p + 1)
	ents[top].next = int32(n)
	top = int32(end)
	depth--
	p++
	goto afterValue

key:
	// Room for the member's entry and, when its value is a string, for
	// the entry after it (the string member path below skips value).
	if n+2 > len(ents) {
		ents = growTape(ents)
	}
	if p >= len(d) || d[p] != '"' {
		if p = skipWS(d, p); p >= len(d) || d[p] != '"' {
			return fail(t, ents, ErrInvalidJSON, p)
		}
	}
	for end = p + 1; end+8 <= len(d); end += 8 { // as for a string value
		if m := specialWord(word(d, end)); m != 0 {
			if end += bits.TrailingZeros64(m) >> 3; d[end] == '"' {
				end++
				goto keyString
			}
			break
		}
	}
	end, r = t.scanUnescape(d, p, -1) // -1: a member name, no span
	if r != "" {
		return fail(t, ents, r, end)
	}
keyString:
	ents[n].keyStart, ents[n].keyEnd = int32(p), int32(end)
	// "key":value with no white space is the common form.
	if end+1 < len(d) && d[end] == ':' && d[end+1] > ' ' {
		p = end + 1
	} else {
		p = skipWS(d, end)
		if p >= len(d) || d[p] != ':' {
			return fail(t, ents, ErrInvalidJSON, p)
		}
		p = skipWS(d, p+1)
	}
	if p >= len(d) || d[p] != '"' {
		goto value
	}
	// A string member, the commonest value in error replies, skips the
	// dispatch at value (the key's check left room for its entry).
	for end = p + 1; end+8 <= len(d); end += 8 {
		if m := specialWord(word(d, end)); m != 0 {
			if end += bits.TrailingZeros64(m) >> 3; d[end] == '"' {
				end++
				ents[n].set(int32(p), int32(end), int32(n+1), jString, true)
				n++
				p = end
				goto afterValue
			}
			break
		}
	}
	goto value
}

// literalEnd returns the end of the literal true, false or null at d[p], or
// -1 when the bytes there are not one.
func literalEnd(d []byte, p int) int {
	var lit string
	switch d[p] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	default:
		lit = "null"
	}
	if len(d)-p < len(lit) || string(d[p:p+len(lit)]) != lit {
		return -1
	}
	return p + len(lit)
}

// fail keeps the grown buffers for the next document and reports an error.
func fail(t *tape, ents []tapeEnt, r ErrReason, pos int) (ErrReason, int) {
	t.ents = ents[:0]
	return r, pos
}

func growTape(ents []tapeEnt) []tapeEnt {
	c := 2 * len(ents)
	if c < 64 {
		c = 64
	}
	g := make([]tapeEnt, c)
	copy(g, ents)
	return g
}

// validateJSON only validates (used where no walking follows).
func validateJSON(data []byte, maxDepth int) (ErrReason, int) {
	var t tape
	return buildTape(&t, data, maxDepth)
}

// scanNumber returns the end of the number at d[p:], or -(pos+1) of the
// first byte that breaks the grammar.
func scanNumber(d []byte, p int) int {
	if p < len(d) && d[p] == '-' {
		p++
	}
	if p >= len(d) {
		return -p - 1
	}
	if d[p] == '0' {
		p++
	} else if d[p] >= '1' && d[p] <= '9' {
		for p < len(d) && d[p] >= '0' && d[p] <= '9' {
			p++
		}
	} else {
		return -p - 1
	}
	if p < len(d) && d[p] == '.' {
		p++
		s := p
		for p < len(d) && d[p] >= '0' && d[p] <= '9' {
			p++
		}
		if p == s {
			return -p - 1
		}
	}
	if p < len(d) && (d[p] == 'e' || d[p] == 'E') {
		p++
		if p < len(d) && (d[p] == '+' || d[p] == '-') {
			p++
		}
		s := p
		for p < len(d) && d[p] >= '0' && d[p] <= '9' {
			p++
		}
		if p == s {
			return -p - 1
		}
	}
	return p
}

// Word-at-a-time masks: a byte of a uint64 is "special" inside a JSON
// string when it is '"', '\\', a control byte or non-ASCII.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// specialWord returns a mask with the high bit set in each byte of the
// little-endian word x that is special; the lowest set bit marks the first
// special byte exactly. x^'"' and x^'\\' are zero in a byte that is '"' or
// '\\', and subtracting 1 sets the high bit of a zero byte; x-0x20 sets the
// high bit of a byte below 0x20 (it wraps). A non-ASCII byte gets its high
// bit from both xors, and keeps it through at least one of the
// subtractions (only 0xA2 loses it in the first, only 0xDC in the second),
// so neither the usual &^ of the zero-byte test nor an | x is needed.
// Borrows run upwards only, and only out of a special byte, so they can
// add false marks above the first special byte but never below it.
func specialWord(x uint64) uint64 {
	q := x ^ (lsb * '"')
	e := x ^ (lsb * '\\')
	return ((q - lsb) | (e - lsb) | (x - lsb*0x20)) & msb
}

// word returns d[i:i+8] as a little-endian word. The caller guarantees
// i+8 <= len(d); no bounds check is made (the scanning loops' conditions
// make it, once).
func word(d []byte, i int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(d)), i))[:])
}

// scanUnescape validates the string starting at d[p] == '"' that left the
// fast path (an escape, a control or non-ASCII byte, or the document's end
// near) and returns its end, or the position of the first problem and its
// reason. ent is the value's tape entry, -1 for a member name (read raw).
// When a value holds an escape, its unescaped contents are appended to
// t.unesc and their span recorded for ent; a string whose special bytes
// were only non-ASCII letters records nothing and reads as plain.
func (t *tape) scanUnescape(d []byte, p int, ent int32) (int, ErrReason) {
	// The contents are never longer than the rest of the document; 8 bytes
	// more let runs be copied a word at a time.
	base := len(t.unesc)
	if cap(t.unesc)-base < len(d)-p+8 {
		g := make([]byte, base, 2*cap(t.unesc)+len(d)-p+8)
		copy(g, t.unesc)
		t.unesc = g
	}
	out := t.unesc[:cap(t.unesc)]
	j := base
	escaped := false
	p++
	for p < len(d) {
		for p+8 <= len(d) {
			x := word(d, p)
			binary.LittleEndian.PutUint64(out[j:], x)
			if m := specialWord(x); m != 0 {
				k := bits.TrailingZeros64(m) >> 3
				p += k
				j += k
				goto found
			}
			p += 8
			j += 8
		}
		for p < len(d) && !strSpecial[d[p]] {
			out[j] = d[p]
			p++
			j++
		}
	found:
		if p >= len(d) {
			break
		}
		switch c := d[p]; {
		case c == '"':
			if escaped && ent >= 0 {
				t.unesc = out[:j]
				t.spans = append(t.spans, unescSpan{ent, int32(base), int32(j)})
			}
			return p + 1, ""
		case c == '\\':
			escaped = true
			if p+1 >= len(d) {
				return p, ErrInvalidJSON
			}
			if b := escapedByte[d[p+1]]; b != 0 {
				out[j] = b
				p += 2
				j++
				continue
			}
			if d[p+1] != 'u' || p+6 > len(d) || !isHex4(d[p+2:p+6]) {
				return p, ErrInvalidJSON
			}
			r, n := unicodeEscape(d, p)
			p += n
			j += utf8.EncodeRune(out[j:], r)
		case c < 0x20:
			return p, ErrInvalidJSON
		default:
			n, r := runeAt(d, p)
			if r != "" {
				return p, r
			}
			j += copy(out[j:], d[p:p+n])
			p += n
		}
	}
	return p, ErrInvalidJSON
}

// runeAt returns the length of the UTF-8 sequence at d[p], or the reason
// it is not one.
func runeAt(d []byte, p int) (int, ErrReason) {
	if r, n := utf8.DecodeRune(d[p:]); r != utf8.RuneError || n > 1 {
		return n, ""
	}
	return 0, ErrInvalidUTF8
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// str returns the string value, unescaping into the arena when needed.
// Non-strings give "".
func (a *arena) str(v jval) string {
	if v.kind != jString {
		return ""
	}
	e := &v.t.ents[v.i]
	if e.plain {
		// The entry's span lies inside the validated document (its quotes
		// are two of its bytes): a view without bounds checks.
		return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(v.t.data)), e.start+1)), e.end-e.start-2)
	}
	for _, sp := range v.t.spans { // a handful per document at most
		if sp.ent == v.i {
			return bytesToString(v.t.unesc[sp.start:sp.end])
		}
	}
	return a.unescape(v.t.data[e.start+1 : e.end-1])
}

// arena is the Decoder's append-only string memory, reset for each message.
type arena struct {
	buf []byte
}

func (a *arena) reset() { a.buf = a.buf[:0] }

// bytesToString views b as a string without copying. The caller guarantees b
// is not modified while the string is in use (see Record's doc).
// stringBytes views s as bytes without copying; the caller must not
// modify them.
func stringBytes(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

func bytesToString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// save copies b into the arena and returns it as a string.
func (a *arena) save(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	a.grow(len(b))
	s := len(a.buf)
	a.buf = append(a.buf, b...)
	return bytesToString(a.buf[s:])
}

// grow makes sure n more bytes fit without moving strings already handed out.
// Growing moves future writes to a new block; old strings keep the old one.
func (a *arena) grow(n int) {
	if cap(a.buf)-len(a.buf) >= n {
		return
	}
	c := 2*cap(a.buf) + n
	if c < 4096 {
		c = 4096
	}
	a.buf = make([]byte, 0, c)
}

func (a *arena) unescape(s []byte) string {
	i := bytes.IndexByte(s, '\\')
	if i < 0 {
		return bytesToString(s)
	}
	a.grow(len(s))
	start := len(a.buf)
	a.buf = appendUnescaped(a.buf, s)
	return bytesToString(a.buf[start:])
}

// appendUnescaped appends the JSON string contents s (validated, without
// quotes) to dst with its escapes resolved. String values are unescaped by
// tape.scanUnescape while they are validated; this serves escaped member
// names, which are rare.
func appendUnescaped(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return dst
		}
		if e := s[i+1]; e != 'u' { // s is valid: any other escape is one byte
			if b := escapedByte[e]; b != 0 {
				e = b
			}
			dst = append(dst, e)
			i += 2
			continue
		}
		if i+6 > len(s) {
			return dst
		}
		r, n := unicodeEscape(s, i)
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst
}

// escapedByte is the byte each one-letter escape stands for (0: none).
var escapedByte = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unicodeEscape decodes the \uXXXX escape at s[i] (its four hex digits
// checked by the caller) and returns the rune and the bytes it took: a high
// surrogate followed by an escaped low one makes one rune of 12 bytes; a
// lone surrogate becomes U+FFFD, as encoding/json reads it.
func unicodeEscape(s []byte, i int) (rune, int) {
	r := rune(hex4(s[i+2 : i+6]))
	if r >= 0xD800 && r < 0xDC00 && i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' && isHex4(s[i+8:i+12]) {
		if lo := rune(hex4(s[i+8 : i+12])); lo >= 0xDC00 && lo < 0xE000 {
			return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12
		}
	}
	if r >= 0xD800 && r < 0xE000 {
		r = utf8.RuneError
	}
	return r, 6
}

func hex4(b []byte) int {
	n := 0
	for _, c := range b {
		n <<= 4
		switch {
		case c >= '0' && c <= '9':
			n |= int(c - '0')
		case c >= 'a' && c <= 'f':
			n |= int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			n |= int(c-'A') + 10
		}
	}
	return n
}

// parseJSON validates data and returns its root value, on a tape from the
// Decoder's pool (a message may hold a few documents at once: the event, the
// body, an event of a stream, the text of an MCP result).
func (d *Decoder) parseJSON(data []byte, path string) (jval, *DecodeError) {
	if d.sc.ntape >= len(d.sc.tapes) {
		return jval{}, errAt(ErrTooDeep, path, -1, "too many nested JSON documents")
	}
	t := &d.sc.tapes[d.sc.ntape]
	d.sc.ntape++
	if r, off := buildTape(t, data, d.opt.MaxDepth); r != "" {
		return jval{}, errAt(r, path, off, "not valid JSON")
	}
	return t.root(), nil
}

// skipWS returns the index of the first non-space byte at or after p.
func skipWS(d []byte, p int) int {
	for p < len(d) && d[p] <= ' ' && isWS(d[p]) {
		p++
	}
	return p
}

// strSpecial marks the bytes that end the fast path inside a string.
var strSpecial = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return
}()
