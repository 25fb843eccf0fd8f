package redact

import "unicode/utf8"

// Raw bytes kept for support (a reply's body) or for a dead letter (a
// message that could not be decoded) are parsed as far as they can be
// before the text pass: the credential fields of an HTTP header block are
// dropped by name, whatever their values look like; so are the values of
// an event's headers and trailers off the allow-list (eventjson.go).

// PhRedacted replaces the value of a credential header.
const PhRedacted = "[redacted]"

// Raw appends to dst the redacted text of b, cut to at most max bytes.
// Invalid UTF-8 and control bytes other than tab, newline and carriage
// return become '?', so the result is safe to store as text. The whole of
// b is redacted before the cut, so a secret at the cut cannot survive in
// part.
func Raw(dst, b []byte, max int) []byte {
	out, _ := raw(dst, b, max)
	return out
}

// Raw is the package's Raw, with its work counted (Work).
func (r *Redactor) Raw(dst, b []byte, max int) []byte {
	out, w := raw(dst, b, max)
	r.work += w
	return out
}

// raw is Raw that also reports its work (runs.go).
func raw(dst, b []byte, max int) ([]byte, int) {
	if max <= 0 || len(b) == 0 {
		return dst, 0
	}
	clean := make([]byte, 0, len(b))
	clean = appendClean(clean, b)
	clean = dropCredentialHeaders(clean)
	clean = dropEventHeaderValues(clean)
	out, changed, work := appendText(nil, bstr(clean))
	work += 2 * len(b) // the clean copy, and the header block or the event's headers
	if !changed {
		out = clean
	}
	if len(out) > max {
		out = out[:max]
		if k := lastStart(out); !utf8.FullRune(out[k:]) {
			out = out[:k] // do not cut a rune in two
		}
	}
	return append(dst, out...), work
}

// lastStart is the index of the first byte of the last rune in b.
func lastStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-4; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return len(b) - 1
}

// appendClean appends b with invalid UTF-8 and control bytes as '?'.
func appendClean(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				c = '?'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			dst = append(dst, '?')
			i++
			continue
		}
		dst = append(dst, b[i:i+n]...)
		i += n
	}
	return dst
}

// dropCredentialHeaders rewrites the header block of an HTTP/1.x response
// or a gRPC reply text form at the start of b (after white space, in any
// case: what the decoder could not read is kept as safely), up to the
// first empty line,
// with the allow-list (KeptHeader): a field whose value is not kept keeps
// its name and loses its value; a name over maxHeaderName bytes, which may
// itself be a secret, is lost as well, and so is any other line of the
// block (a folded continuation, a line without a name). The status line and
// the values kept are left to the text pass.
func dropCredentialHeaders(b []byte) []byte {
	s := bstr(b)
	i := 0
	for i < len(s) && isJSONSpace(s[i]) {
		i++ // a reply after white space (dead-lettered as invalid event JSON)
	}
	if !(len(s)-i >= 5 && (hasPrefixFold(s[i:], "http/") || hasPrefixFold(s[i:], "grpc"))) {
		return b
	}
	first := i
	var out []byte
	copied := 0
	for i < len(s) {
		e := i
		for e < len(s) && s[e] != '\n' {
			e++
		}
		line := s[i:e]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if line == "" {
			break // end of the header block
		}
		if i > first { // the status line stays
			if c := indexColon(line); c <= 0 || KeptHeader(trimSpaces(line[:c])) != HeaderValue {
				if out == nil {
					out = make([]byte, 0, len(b))
				}
				out = append(out, s[copied:i]...)
				if c > 0 && len(trimSpaces(line[:c])) <= maxHeaderName {
					out = append(out, line[:c+1]...)
					out = append(out, ' ')
					out = append(out, PhRedacted...)
				} else {
					out = append(out, PhRedacted...) // a folded line, a line without a name, or a name too long to keep
				}
				copied = i + len(line)
			}
		}
		i = e + 1
	}
	if out == nil {
		return b
	}
	return append(out, s[copied:]...)
}

// maxHeaderName is the longest header name Raw keeps for a field whose
// value it drops (real header names are far shorter).
const maxHeaderName = 64

func indexColon(line string) int {
	for k := 0; k < len(line); k++ {
		switch line[k] {
		case ':':
			return k
		case ' ', '\t':
			if k == 0 {
				return -1 // a continuation line
			}
		}
	}
	return -1
}

func trimSpaces(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
