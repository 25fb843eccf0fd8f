package parse

import "sync"

// tapes lends validation tapes to ValidJSON, so that checking a document
// costs no allocation once the pool is warm.
var tapes = sync.Pool{New: func() any { return new(tape) }}

// ValidJSON reports whether data is exactly one JSON value, surrounded by
// white space only, nested at most maxDepth deep and with UTF-8 strings:
// what the decoder accepts where it reads JSON. Producers use it to decide
// whether a body can be embedded in an event as JSON and still decode.
func ValidJSON(data []byte, maxDepth int) bool {
	t := tapes.Get().(*tape)
	r, _ := buildTape(t, data, maxDepth)
	t.data = nil // do not pin the document in the pool
	if cap(t.ents) > 1<<14 || cap(t.unesc) > 1<<16 {
		*t = tape{} // a rare large document: let it go
	}
	tapes.Put(t)
	return r == ""
}
