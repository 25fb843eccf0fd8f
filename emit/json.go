package emit

import (
	"encoding/json"
	"unsafe"
)

// This file is a minimal JSON walker for the few members the emitter reads
// (the JSON-RPC method and ids of a request, error/result/isError/status of
// a reply). It copies nothing and allocates nothing; it trusts the input no
// further than it walks, and any malformed input simply yields "not found".

const maxWalkDepth = 64

func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func firstNonSpace(b []byte) byte {
	if i := skipSpace(b, 0); i < len(b) {
		return b[i]
	}
	return 0
}

func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// skipString returns the index after the closing quote of the string that
// starts at b[i] == '"', or -1.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i, depth int) int {
	i = skipSpace(b, i)
	if i >= len(b) || depth > maxWalkDepth {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		return skipContainer(b, i)
	default: // number, true, false, null
		for i < len(b) {
			switch c := b[i]; {
			case c == ',' || c == '}' || c == ']' || isSpace(c):
				return i
			}
			i++
		}
		return i
	}
}

// skipContainer returns the index after the object or array starting at
// b[i], or -1: it counts brackets outside strings and checks no more (what
// the walk reads from inside is checked as it is read).
func skipContainer(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			if i = skipString(b, i); i < 0 {
				return -1
			}
			i-- // the loop steps past the closing quote
		case '{', '[':
			if depth++; depth > maxWalkDepth {
				return -1
			}
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// get returns the value of member key of the object v (raw bytes), or nil.
// Keys are compared as written (no unescaping: the members read here are
// plain ASCII names).
func get(v []byte, key string) []byte {
	vs := memberStart(v, key)
	if vs < 0 {
		return nil
	}
	if e := skipValue(v, vs, 1); e >= 0 {
		return v[vs:e]
	}
	// Cut by a bound (a request prefix): the members read before the cut
	// are still there.
	return v[vs:]
}

// memberStart returns the offset in v of member key's value, or -1 when
// the object v has no such member. It walks v's members up to key only,
// and not the value it finds.
func memberStart(v []byte, key string) int {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return -1
	}
	i++
	for {
		if i = skipSpace(v, i); i >= len(v) || v[i] != '"' {
			return -1
		}
		ks := i + 1
		if i = skipString(v, i); i < 0 {
			return -1
		}
		k := v[ks : i-1]
		if i = skipSpace(v, i); i >= len(v) || v[i] != ':' {
			return -1
		}
		vs := skipSpace(v, i+1)
		if bstr(k) == key {
			if vs >= len(v) {
				return -1
			}
			return vs
		}
		e := skipValue(v, vs, 1)
		if e < 0 {
			return -1
		}
		if i = skipSpace(v, e); i >= len(v) || v[i] != ',' {
			return -1
		}
		i++
	}
}

// pick sets vals[i] to the value of member keys[i] of the object v (its
// first occurrence; nil when absent), in one pass over v's members: the
// few members read from one object cost one walk, not one each. A value
// cut by a bound (a request prefix) is given up to the cut, and the walk
// ends there.
func pick(v []byte, keys []string, vals [][]byte) {
	clear(vals)
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return
	}
	left := len(keys)
	for i++; left > 0; i++ {
		if i = skipSpace(v, i); i >= len(v) || v[i] != '"' {
			return
		}
		ks := i + 1
		if i = skipString(v, i); i < 0 {
			return
		}
		k := bstr(v[ks : i-1])
		if i = skipSpace(v, i); i >= len(v) || v[i] != ':' {
			return
		}
		vs := skipSpace(v, i+1)
		if vs >= len(v) {
			return
		}
		e := skipValue(v, vs, 1)
		for j, key := range keys {
			if vals[j] == nil && k == key {
				if e < 0 {
					vals[j] = v[vs:]
				} else {
					vals[j] = v[vs:e]
				}
				left--
				break
			}
		}
		if e < 0 {
			return
		}
		if i = skipSpace(v, e); i >= len(v) || v[i] != ',' {
			return
		}
	}
}

// path follows nested object members.
func path(v []byte, keys ...string) []byte {
	for _, k := range keys {
		if v = get(v, k); v == nil {
			return nil
		}
	}
	return v
}

func isObject(v []byte) bool { return len(v) > 0 && v[0] == '{' }

func isNullOrAbsent(v []byte) bool { return len(v) == 0 || string(v) == "null" }

// nullAt reports whether the value at v[i:] is the literal null.
func nullAt(v []byte, i int) bool {
	return len(v)-i >= 4 && string(v[i:i+4]) == "null" && (len(v)-i == 4 || !isLetter(v[i+4]))
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// jsonString returns the string a JSON string token holds. Without escapes
// it is a view of v; with escapes it is decoded (an allocation).
func jsonString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	for _, c := range inner {
		if c == '\\' {
			var s string
			if json.Unmarshal(v, &s) != nil {
				return "", false
			}
			return s, true
		}
	}
	return bstr(inner), true
}

// stringOf is jsonString that gives "" for anything but a string.
func stringOf(v []byte) string {
	s, _ := jsonString(v)
	return s
}
