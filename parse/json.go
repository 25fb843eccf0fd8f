package parse

import (
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

// jval is a validated JSON value: its kind and its raw bytes.
type jval struct {
	kind byte
	raw  []byte
}

func (v jval) ok() bool { return v.kind != jNone }

// validator checks that data is exactly one JSON value (with surrounding
// white space) of nesting at most maxDepth, with UTF-8 strings.
type validator struct {
	data     []byte
	pos      int
	maxDepth int
	reason   ErrReason
	errPos   int
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (v *validator) fail(r ErrReason) bool {
	if v.reason == "" {
		v.reason, v.errPos = r, v.pos
	}
	return false
}

func (v *validator) ws() {
	for v.pos < len(v.data) && isWS(v.data[v.pos]) {
		v.pos++
	}
}

// validateJSON returns "" when data is one valid JSON value, else the
// reason and byte offset of the first problem.
func validateJSON(data []byte, maxDepth int) (ErrReason, int) {
	v := validator{data: data, maxDepth: maxDepth}
	v.ws()
	if !v.value(0) {
		return v.reason, v.errPos
	}
	v.ws()
	if v.pos != len(data) {
		return ErrInvalidJSON, v.pos
	}
	return "", 0
}

func (v *validator) value(depth int) bool {
	if v.pos >= len(v.data) {
		return v.fail(ErrInvalidJSON)
	}
	switch c := v.data[v.pos]; c {
	case '{':
		if depth >= v.maxDepth {
			return v.fail(ErrTooDeep)
		}
		v.pos++
		v.ws()
		if v.pos < len(v.data) && v.data[v.pos] == '}' {
			v.pos++
			return true
		}
		for {
			v.ws()
			if v.pos >= len(v.data) || v.data[v.pos] != '"' {
				return v.fail(ErrInvalidJSON)
			}
			if !v.str() {
				return false
			}
			v.ws()
			if v.pos >= len(v.data) || v.data[v.pos] != ':' {
				return v.fail(ErrInvalidJSON)
			}
			v.pos++
			v.ws()
			if !v.value(depth + 1) {
				return false
			}
			v.ws()
			if v.pos >= len(v.data) {
				return v.fail(ErrInvalidJSON)
			}
			if v.data[v.pos] == ',' {
				v.pos++
				continue
			}
			if v.data[v.pos] == '}' {
				v.pos++
				return true
			}
			return v.fail(ErrInvalidJSON)
		}
	case '[':
		if depth >= v.maxDepth {
			return v.fail(ErrTooDeep)
		}
		v.pos++
		v.ws()
		if v.pos < len(v.data) && v.data[v.pos] == ']' {
			v.pos++
			return true
		}
		for {
			v.ws()
			if !v.value(depth + 1) {
				return false
			}
			v.ws()
			if v.pos >= len(v.data) {
				return v.fail(ErrInvalidJSON)
			}
			if v.data[v.pos] == ',' {
				v.pos++
				continue
			}
			if v.data[v.pos] == ']' {
				v.pos++
				return true
			}
			return v.fail(ErrInvalidJSON)
		}
	case '"':
		return v.str()
	case 't':
		return v.lit("true")
	case 'f':
		return v.lit("false")
	case 'n':
		return v.lit("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return v.num()
		}
		return v.fail(ErrInvalidJSON)
	}
}

func (v *validator) lit(s string) bool {
	if len(v.data)-v.pos < len(s) || string(v.data[v.pos:v.pos+len(s)]) != s {
		return v.fail(ErrInvalidJSON)
	}
	v.pos += len(s)
	return true
}

func (v *validator) num() bool {
	d := v.data
	p := v.pos
	if p < len(d) && d[p] == '-' {
		p++
	}
	if p >= len(d) {
		v.pos = p
		return v.fail(ErrInvalidJSON)
	}
	if d[p] == '0' {
		p++
	} else if d[p] >= '1' && d[p] <= '9' {
		for p < len(d) && d[p] >= '0' && d[p] <= '9' {
			p++
		}
	} else {
		v.pos = p
		return v.fail(ErrInvalidJSON)
	}
	if p < len(d) && d[p] == '.' {
		p++
		s := p
		for p < len(d) && d[p] >= '0' && d[p] <= '9' {
			p++
		}
		if p == s {
			v.pos = p
			return v.fail(ErrInvalidJSON)
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
			v.pos = p
			return v.fail(ErrInvalidJSON)
		}
	}
	v.pos = p
	return true
}

func (v *validator) str() bool {
	d := v.data
	p := v.pos + 1
	for p < len(d) {
		c := d[p]
		switch {
		case c == '"':
			v.pos = p + 1
			return true
		case c == '\\':
			if p+1 >= len(d) {
				v.pos = p
				return v.fail(ErrInvalidJSON)
			}
			switch d[p+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p += 2
			case 'u':
				if p+6 > len(d) || !isHex4(d[p+2:p+6]) {
					v.pos = p
					return v.fail(ErrInvalidJSON)
				}
				p += 6
			default:
				v.pos = p
				return v.fail(ErrInvalidJSON)
			}
		case c < 0x20:
			v.pos = p
			return v.fail(ErrInvalidJSON)
		case c < utf8.RuneSelf:
			p++
		default:
			r, n := utf8.DecodeRune(d[p:])
			if r == utf8.RuneError && n <= 1 {
				v.pos = p
				return v.fail(ErrInvalidUTF8)
			}
			p += n
		}
	}
	v.pos = p
	return v.fail(ErrInvalidJSON)
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// --- walking validated JSON ---

// skipWS returns the index of the first non-space byte at or after p.
func skipWS(d []byte, p int) int {
	for p < len(d) && isWS(d[p]) {
		p++
	}
	return p
}

// valueEnd returns the index just past the value starting at p. d must be
// valid JSON from p on.
func valueEnd(d []byte, p int) int {
	switch d[p] {
	case '"':
		p++
		for p < len(d) {
			switch d[p] {
			case '\\':
				p += 2
			case '"':
				return p + 1
			default:
				p++
			}
		}
		return p
	case '{', '[':
		depth := 0
		for p < len(d) {
			switch d[p] {
			case '{', '[':
				depth++
				p++
			case '}', ']':
				depth--
				p++
				if depth == 0 {
					return p
				}
			case '"':
				p = valueEnd(d, p)
			default:
				p++
			}
		}
		return p
	default:
		for p < len(d) {
			c := d[p]
			if c == ',' || c == '}' || c == ']' || isWS(c) {
				return p
			}
			p++
		}
		return p
	}
}

// parseVal reads the value at the start of (validated) raw.
func parseVal(raw []byte) jval {
	p := skipWS(raw, 0)
	if p >= len(raw) {
		return jval{}
	}
	e := valueEnd(raw, p)
	return jval{kind: kindOf(raw[p]), raw: raw[p:e]}
}

func kindOf(c byte) byte {
	switch c {
	case '{', '[', '"', 't', 'f', 'n':
		return c
	}
	return jNumber
}

// objIter walks the members of a validated object.
type objIter struct {
	d []byte
	p int
}

func (v jval) object() objIter {
	if v.kind != jObject {
		return objIter{}
	}
	return objIter{d: v.raw, p: 1}
}

// next returns the next member's raw key (without quotes, escapes kept) and
// value.
func (it *objIter) next() (key []byte, val jval, ok bool) {
	d := it.d
	p := skipWS(d, it.p)
	if p >= len(d) || d[p] == '}' {
		return nil, jval{}, false
	}
	if d[p] == ',' {
		p = skipWS(d, p+1)
	}
	ke := valueEnd(d, p)
	key = d[p+1 : ke-1]
	p = skipWS(d, ke)
	p = skipWS(d, p+1) // ':'
	ve := valueEnd(d, p)
	val = jval{kind: kindOf(d[p]), raw: d[p:ve]}
	it.p = ve
	return key, val, true
}

// arrIter walks the elements of a validated array.
type arrIter struct {
	d []byte
	p int
}

func (v jval) array() arrIter {
	if v.kind != jArray {
		return arrIter{}
	}
	return arrIter{d: v.raw, p: 1}
}

func (it *arrIter) next() (jval, bool) {
	d := it.d
	p := skipWS(d, it.p)
	if p >= len(d) || d[p] == ']' {
		return jval{}, false
	}
	if d[p] == ',' {
		p = skipWS(d, p+1)
	}
	e := valueEnd(d, p)
	it.p = e
	return jval{kind: kindOf(d[p]), raw: d[p:e]}, true
}

// get returns the member named key of an object value.
func (v jval) get(key string) jval {
	it := v.object()
	for {
		k, val, ok := it.next()
		if !ok {
			return jval{}
		}
		if string(k) == key {
			return val
		}
	}
}

// int returns the value as an integer: a JSON number (fraction truncated) or
// a string holding one (ProtoJSON int64). ok is false for anything else.
func (v jval) int() (int64, bool) {
	b := v.raw
	switch v.kind {
	case jString:
		b = b[1 : len(b)-1]
	case jNumber:
	default:
		return 0, false
	}
	return parseIntPrefix(b)
}

func parseIntPrefix(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 || b[0] < '0' || b[0] > '9' {
		return 0, false
	}
	var n int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if n > (1<<62)/10 {
			return 0, false
		}
		n = n*10 + int64(b[i]-'0')
	}
	if i < len(b) {
		// Allow a fraction (truncated) or exponent-free decimals only.
		if b[i] != '.' {
			return 0, false
		}
		for i++; i < len(b); i++ {
			if b[i] < '0' || b[i] > '9' {
				return 0, false
			}
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// boolean returns the value as a boolean: JSON true/false or the strings
// "true"/"false" (ErrorInfo metadata carries strings).
func (v jval) boolean() (bool, bool) {
	switch v.kind {
	case jTrue:
		return true, true
	case jFalse:
		return false, true
	case jString:
		s := v.raw[1 : len(v.raw)-1]
		if string(s) == "true" {
			return true, true
		}
		if string(s) == "false" {
			return false, true
		}
	}
	return false, false
}

// rawStr returns the string's contents without quotes, escapes kept.
func (v jval) rawStr() []byte {
	if v.kind != jString {
		return nil
	}
	return v.raw[1 : len(v.raw)-1]
}

// str returns the string value, unescaping into the arena when needed.
// Non-strings give "".
func (a *arena) str(v jval) string {
	if v.kind != jString {
		return ""
	}
	return a.unescape(v.raw[1 : len(v.raw)-1])
}

// arena is the Decoder's append-only string memory, reset for each message.
type arena struct {
	buf []byte
}

func (a *arena) reset() { a.buf = a.buf[:0] }

// bytesToString views b as a string without copying. The caller guarantees b
// is not modified while the string is in use (see Record's doc).
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
	i := 0
	for i < len(s) && s[i] != '\\' {
		i++
	}
	if i == len(s) {
		return bytesToString(s)
	}
	a.grow(len(s))
	start := len(a.buf)
	a.buf = append(a.buf, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c != '\\' {
			a.buf = append(a.buf, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch s[i+1] {
		case 'n':
			a.buf = append(a.buf, '\n')
		case 't':
			a.buf = append(a.buf, '\t')
		case 'r':
			a.buf = append(a.buf, '\r')
		case 'b':
			a.buf = append(a.buf, '\b')
		case 'f':
			a.buf = append(a.buf, '\f')
		case 'u':
			if i+6 <= len(s) {
				r := rune(hex4(s[i+2 : i+6]))
				i += 6
				if r >= 0xD800 && r < 0xDC00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					lo := rune(hex4(s[i+2 : i+6]))
					if lo >= 0xDC00 && lo < 0xE000 {
						r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
						i += 6
					}
				}
				if r >= 0xD800 && r < 0xE000 {
					r = utf8.RuneError
				}
				a.buf = utf8.AppendRune(a.buf, r)
				continue
			}
		default:
			a.buf = append(a.buf, s[i+1])
		}
		i += 2
	}
	return bytesToString(a.buf[start:])
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
