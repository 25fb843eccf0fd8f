package redact

import "strings"

// A dead-lettered event keeps its raw bytes, and an event carries the
// reply's headers ("reply.headers", as an object or as [name, value]
// pairs) and gRPC trailers ("reply.grpc.trailers"). The decoder reads
// them through the allow-list (KeptHeader) and stores none; in a dead
// letter the same list holds: dropEventHeaderValues rewrites every value
// whose header is not on the list to [redacted] before the text pass, so a
// customer value in X-Customer-Note, a token split across two headers, or
// a PEM block folded into a header value is not kept either. The JSON may
// be invalid (that is why it is dead-lettered): the reading is tolerant,
// and where it cannot follow the structure it leaves the rest to the text
// pass; a value cut by the end of the message is dropped to the end.

// dropEventHeaderValues rewrites the header values of event JSON b (text
// that starts with '{' after white space); other text is returned as is.
func dropEventHeaderValues(b []byte) []byte {
	s := bstr(b)
	k := 0
	for k < len(s) && isJSONSpace(s[k]) {
		k++
	}
	if k == len(s) || s[k] != '{' {
		return b
	}
	e := eventHeaders{s: s}
	for i := k; i < len(s); {
		f := strings.Index(s[i:], `ers"`)
		if f < 0 {
			break
		}
		f += i
		i = f + 4
		if !(f >= 5 && s[f-5:f] == `"head` || f >= 6 && s[f-6:f] == `"trail`) {
			continue
		}
		j := e.space(i)
		if j >= len(s) || s[j] != ':' {
			continue
		}
		j = e.space(j + 1)
		if j >= len(s) {
			break
		}
		switch s[j] {
		case '{':
			i = e.object(j + 1)
		case '[':
			i = e.pairs(j + 1)
		}
	}
	if e.out == nil {
		return b
	}
	return append(e.out, s[e.copied:]...)
}

// eventHeaders is one rewrite: s[:copied] is in out (once out is set).
type eventHeaders struct {
	s      string
	out    []byte
	copied int
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (e *eventHeaders) space(i int) int {
	for i < len(e.s) && isJSONSpace(e.s[i]) {
		i++
	}
	return i
}

// str returns the end of the JSON string whose opening quote is at i-1:
// the index of its closing quote, or len(s) when it is cut.
func (e *eventHeaders) str(i int) int {
	s := e.s
	for i < len(s) {
		switch s[i] {
		case '"':
			return i
		case '\\':
			i++
		}
		i++
	}
	return len(s)
}

// drop replaces the string s[vs:ve] (without its quotes) with [redacted].
func (e *eventHeaders) drop(vs, ve int) {
	if e.out == nil {
		e.out = make([]byte, 0, len(e.s))
	}
	e.out = append(e.out, e.s[e.copied:vs]...)
	e.out = append(e.out, PhRedacted...)
	e.copied = ve
}

// value handles the value of header name at i (a string, or an array of
// strings): dropped unless the header's value is kept. It returns where
// reading goes on, and false when the structure was not followed.
func (e *eventHeaders) value(name string, named bool, i int) (int, bool) {
	s := e.s
	keep := named && KeptHeader(name) == HeaderValue
	switch {
	case i < len(s) && s[i] == '"':
		end := e.str(i + 1)
		if !keep && end > i+1 {
			e.drop(i+1, end)
		}
		return end + 1, true
	case i < len(s) && s[i] == '[':
		j := e.space(i + 1)
		for j < len(s) && s[j] == '"' {
			end := e.str(j + 1)
			if !keep && end > j+1 {
				e.drop(j+1, end)
			}
			j = e.space(end + 1)
			if j < len(s) && s[j] == ',' {
				j = e.space(j + 1)
			}
		}
		if j < len(s) && s[j] == ']' {
			return j + 1, true
		}
		return j, false
	}
	return i, false
}

// name reads a header name at i (its opening quote): the name, whether it
// can be matched (no escapes in it), and the index after its closing quote.
func (e *eventHeaders) name(i int) (string, bool, int) {
	end := e.str(i + 1)
	n := e.s[i+1 : end]
	return n, strings.IndexByte(n, '\\') < 0, end + 1
}

// object reads {"Name": value, …} from i (after the '{').
func (e *eventHeaders) object(i int) int {
	s := e.s
	for {
		i = e.space(i)
		if i >= len(s) || s[i] != '"' {
			return i // '}' or a structure not followed
		}
		n, named, j := e.name(i)
		j = e.space(j)
		if j >= len(s) || s[j] != ':' {
			return j
		}
		var ok bool
		i, ok = e.value(n, named, e.space(j+1))
		if !ok {
			return i
		}
		i = e.space(i)
		if i >= len(s) || s[i] != ',' {
			return i
		}
		i++
	}
}

// pairs reads [["Name", value], …] from i (after the outer '[').
func (e *eventHeaders) pairs(i int) int {
	s := e.s
	for {
		i = e.space(i)
		if i >= len(s) || s[i] != '[' {
			return i
		}
		i = e.space(i + 1)
		if i >= len(s) || s[i] != '"' {
			return i
		}
		n, named, j := e.name(i)
		j = e.space(j)
		if j >= len(s) || s[j] != ',' {
			return j
		}
		var ok bool
		i, ok = e.value(n, named, e.space(j+1))
		if !ok {
			return i
		}
		i = e.space(i)
		if i >= len(s) || s[i] != ']' {
			return i
		}
		i = e.space(i + 1)
		if i >= len(s) || s[i] != ',' {
			return i
		}
		i++
	}
}
