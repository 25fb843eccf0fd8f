package emit

import (
	"bytes"
	"strings"
)

// This file decides whether a reply is an error reply, the same way the
// decoder (parse) tells an error from a success: an HTTP status of 400 or
// more; in a JSON body, a non-null "error" member (a JSON-RPC error, a
// google.rpc.Status in a 200), an MCP tool result with "isError": true, or a
// task that ended FAILED (A2A v1 TASK_STATE_FAILED, v0.3 "failed"; bare, in
// "result", "task" or "statusUpdate"); in an event stream, an event named
// "error" or an event whose data is such a JSON body.

// IsErrorStatus reports whether an HTTP status is an error by itself.
func IsErrorStatus(status int) bool { return status >= 400 }

// BodyKind is what the Content-Type says about a body, for inspection.
type BodyKind uint8

const (
	BodyOther BodyKind = iota // not inspected unless the status is an error
	BodyJSON                  // application/json, application/*+json
	BodySSE                   // text/event-stream
)

// KindOf classifies a Content-Type value (parameters ignored).
func KindOf(contentType string) BodyKind {
	switch contentType { // the common spellings, without parsing
	case "application/json", "application/json; charset=utf-8":
		return BodyJSON
	case "text/event-stream":
		return BodySSE
	case "text/html; charset=utf-8", "text/plain; charset=utf-8", "text/html", "text/plain",
		"application/octet-stream", "application/grpc", "application/x-protobuf":
		return BodyOther
	}
	mt := contentType
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = strings.TrimSpace(mt)
	n := len(mt)
	switch {
	case n >= 5 && (mt[n-5] == '/' || mt[n-5] == '+') && strings.EqualFold(mt[n-4:], "json"):
		return BodyJSON
	case n == len("text/event-stream") && strings.EqualFold(mt, "text/event-stream"):
		return BodySSE
	}
	return BodyOther
}

// JSONIsError reports whether a complete JSON body is an error reply
// (see the file comment). Batches (arrays) are errors when a member is.
func JSONIsError(b []byte) bool {
	// Most successful replies hold none of these endings, so no walk is
	// needed: a member "error" or "isError" ends in rror", a failed task's
	// state ("failed", "TASK_STATE_FAILED") in iled" or ILED". Needles that
	// start with a letter, not a quote, are three times cheaper to find in
	// JSON, which is full of quotes.
	if !bytes.Contains(b, []byte(`rror"`)) && !bytes.Contains(b, []byte(`iled"`)) &&
		!bytes.Contains(b, []byte(`ILED"`)) {
		return false
	}
	i := skipSpace(b, 0)
	if i >= len(b) {
		return false
	}
	if b[i] == '[' {
		for i = skipSpace(b, i+1); i < len(b) && b[i] != ']'; {
			e := skipValue(b, i, 1)
			if e < 0 {
				return false
			}
			if objectIsError(b[i:e]) {
				return true
			}
			if i = skipSpace(b, e); i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		return false
	}
	return objectIsError(b[i:])
}

func objectIsError(v []byte) bool {
	if !isObject(v) {
		return false
	}
	if i := memberStart(v, "error"); i >= 0 && !nullAt(v, i) {
		return true // a JSON-RPC error: its value need not be walked
	}
	if res := get(v, "result"); res != nil {
		if !isObject(res) {
			return false
		}
		if string(get(res, "isError")) == "true" {
			return true
		}
		return taskFailed(res)
	}
	return taskFailed(v)
}

// taskFailed finds a task status that is FAILED, directly or under
// statusUpdate / task / result, at most three levels down.
func taskFailed(v []byte) bool {
	for depth := 0; depth < 3 && isObject(v); depth++ {
		if st := get(v, "status"); isObject(st) {
			s := stringOf(get(st, "state"))
			return s == "TASK_STATE_FAILED" || s == "failed"
		}
		next := get(v, "statusUpdate")
		if next == nil {
			next = get(v, "task")
		}
		if next == nil {
			next = get(v, "result")
		}
		v = next
	}
	return false
}

// SSEScanner inspects an event stream as it passes: Write the bytes in any
// chunking; after each complete event it knows whether the stream carried
// an error, and keeps the last event that did. It never holds the stream
// back (it only reads what was written) and bounds its memory: an event
// larger than max bytes is not inspected. The zero value is not usable; use
// NewSSEScanner or Reset.
type SSEScanner struct {
	max     int
	line    []byte // partial line across writes
	name    []byte // event: of the current event
	data    []byte // data: lines of the current event, joined by \n
	over    bool   // the current event exceeded max
	lastErr []byte // the last error event, re-framed as an SSE block
	found   bool
}

// NewSSEScanner returns a scanner that inspects events of up to max bytes.
func NewSSEScanner(max int) *SSEScanner {
	s := &SSEScanner{}
	s.Reset(max)
	return s
}

// Reset clears the scanner for a new stream, keeping its buffers.
func (s *SSEScanner) Reset(max int) {
	*s = SSEScanner{max: max, line: s.line[:0], name: s.name[:0], data: s.data[:0], lastErr: s.lastErr[:0]}
}

// Found reports whether an error event has passed.
func (s *SSEScanner) Found() bool { return s.found }

// ErrorEvent returns the last error event as an SSE block ("event: …\n"
// when it had a name, "data: …\n" lines, a blank line), which decodes to the
// same record as the whole stream. Borrowed until the next Write or Reset.
func (s *SSEScanner) ErrorEvent() []byte { return s.lastErr }

// Write inspects p. It never fails.
func (s *SSEScanner) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(s.line)+len(p) <= s.max {
				s.line = append(s.line, p...)
			} else {
				s.over = true
				s.line = s.line[:0]
			}
			break
		}
		line := p[:i]
		if len(s.line) > 0 {
			if len(s.line)+len(line) <= s.max {
				s.line = append(s.line, line...)
			} else {
				s.over = true
			}
			line = s.line
		}
		s.field(bytes.TrimSuffix(line, []byte{'\r'}))
		s.line = s.line[:0]
		p = p[i+1:]
	}
	return n, nil
}

// End dispatches an event left open when the stream ended without a blank
// line.
func (s *SSEScanner) End() {
	if len(s.line) > 0 {
		s.field(bytes.TrimSuffix(s.line, []byte{'\r'}))
		s.line = s.line[:0]
	}
	s.dispatch()
}

func (s *SSEScanner) field(line []byte) {
	switch {
	case len(line) == 0:
		s.dispatch()
	case bytes.HasPrefix(line, []byte("data:")):
		v := line[5:]
		if len(v) > 0 && v[0] == ' ' {
			v = v[1:]
		}
		if s.over || len(s.data)+len(v)+1 > s.max {
			s.over = true
			return
		}
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, v...)
	case bytes.HasPrefix(line, []byte("event:")):
		s.name = append(s.name[:0], bytes.TrimSpace(line[6:])...)
	}
}

func (s *SSEScanner) dispatch() {
	if !s.over && len(s.data) > 0 {
		data := trimSpace(s.data)
		if string(s.name) == "error" || JSONIsError(data) {
			s.found = true
			b := s.lastErr[:0]
			if len(s.name) > 0 {
				b = append(b, "event: "...)
				b = append(b, s.name...)
				b = append(b, '\n')
			}
			for len(data) > 0 {
				l := data
				if i := bytes.IndexByte(data, '\n'); i >= 0 {
					l, data = data[:i], data[i+1:]
				} else {
					data = nil
				}
				b = append(b, "data: "...)
				b = append(b, l...)
				b = append(b, '\n')
			}
			s.lastErr = append(b, '\n')
		}
	}
	s.name, s.data, s.over = s.name[:0], s.data[:0], false
}
