package parse

import "unsafe"

// Walking a validated document's tape (json.go builds it): object and
// array iterators, member lookup and the scalar readers. Nothing here
// allocates.

// objIter walks the members of an object.
type objIter struct {
	t      *tape
	i, end int32
}

func (v jval) object() objIter {
	if v.kind != jObject {
		return objIter{}
	}
	return objIter{t: v.t, i: v.i + 1, end: v.t.ents[v.i].next}
}

// next returns the next member's raw key (without quotes, escapes kept) and
// value.
func (it *objIter) next() (key []byte, val jval, ok bool) {
	if it.t == nil || it.i >= it.end {
		return nil, jval{}, false
	}
	e := &it.t.ents[it.i]
	// The key's span lies inside the validated document (its quotes are
	// two of its bytes): a view without bounds checks.
	key = unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(it.t.data)), e.keyStart+1)), e.keyEnd-e.keyStart-2)
	val = jval{t: it.t, i: it.i, kind: e.kind}
	it.i = e.next
	return key, val, true
}

// arrIter walks the elements of an array.
type arrIter struct {
	t      *tape
	i, end int32
}

func (v jval) array() arrIter {
	if v.kind != jArray {
		return arrIter{}
	}
	return arrIter{t: v.t, i: v.i + 1, end: v.t.ents[v.i].next}
}

func (it *arrIter) next() (jval, bool) {
	if it.t == nil || it.i >= it.end {
		return jval{}, false
	}
	v := it.t.val(it.i)
	it.i = it.t.ents[it.i].next
	return v, true
}

// get returns the member named key of an object value.
func (v jval) get(key string) jval {
	if v.kind != jObject {
		return jval{}
	}
	t := v.t
	ents := t.ents
	n := int32(len(key))
	for i, end := v.i+1, ents[v.i].next; i < end; {
		e := &ents[i]
		// keyEnd-keyStart is the key's length plus its two quotes.
		if e.keyEnd-e.keyStart-2 == n && string(t.data[e.keyStart+1:e.keyEnd-1]) == key {
			return jval{t: t, i: i, kind: e.kind}
		}
		i = e.next
	}
	return jval{}
}

// getAtType is get("@type"), the member every typed detail has, with the
// key compared as a constant (no call).
func (v jval) getAtType() jval {
	if v.kind != jObject {
		return jval{}
	}
	t := v.t
	ents := t.ents
	for i, end := v.i+1, ents[v.i].next; i < end; {
		e := &ents[i]
		if e.keyEnd-e.keyStart == 7 && string(t.data[e.keyStart+1:e.keyEnd-1]) == "@type" {
			return jval{t: t, i: i, kind: e.kind}
		}
		i = e.next
	}
	return jval{}
}

// int returns the value as an integer: a JSON number (fraction truncated) or
// a string holding one (ProtoJSON int64). ok is false for anything else.
func (v jval) int() (int64, bool) {
	var b []byte
	switch v.kind {
	case jString:
		b = v.inner()
	case jNumber:
		b = v.bytes()
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
	if len(b) <= 18 { // 18 digits cannot pass the bound checked below: no check per digit
		for ; i < len(b); i++ {
			c := b[i] - '0'
			if c > 9 {
				break
			}
			n = n*10 + int64(c)
		}
	} else {
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if n > (1<<62)/10 {
				return 0, false
			}
			n = n*10 + int64(b[i]-'0')
		}
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
		s := v.inner()
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
	return v.inner()
}
