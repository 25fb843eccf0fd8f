package parse

import "bytes"

// This file finds the error in an event stream (text/event-stream).

// looksSSE reports whether a body is an event stream without the media type.
func looksSSE(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	switch b[0] { // every field line starts with one of these
	case 'd', 'e', 'i', ':':
	default:
		return false
	}
	return bytes.HasPrefix(b, []byte("data:")) || bytes.HasPrefix(b, []byte("event:")) ||
		bytes.HasPrefix(b, []byte("id:")) || bytes.HasPrefix(b, []byte(": "))
}

// sse finds the last event of a stream that carries an error (an `error`
// event, a JSON-RPC error, a Status, or a task that failed) and decodes it.
func (d *Decoder) sse(body []byte, h *hdrInfo, f *facts, rec *Record) *DecodeError {
	f.form.stream = true
	var best []byte
	var name []byte
	buf := d.sc.sse[:0]
	flush := func() {
		if len(buf) > 0 {
			data := bytes.TrimSpace(buf)
			if bytes.Equal(name, []byte("error")) || sseCarriesError(data) {
				best = append(d.sc.sseBest[:0], data...)
				d.sc.sseBest = best
			}
		}
		buf, name = buf[:0], nil
	}
	for len(body) > 0 {
		var line []byte
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			line, body = body, nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			flush()
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			if len(buf) > 0 {
				buf = append(buf, '\n')
			}
			buf = append(buf, v...)
		case bytes.HasPrefix(line, []byte("event:")):
			name = bytes.TrimSpace(line[6:])
		}
	}
	flush()
	d.sc.sse = buf[:0]
	if best == nil {
		return errAt(ErrNotAnError, "reply.body", -1, "event stream carries no error event")
	}
	v, err := d.parseJSON(best, "reply.body.event")
	if err != nil {
		return err
	}
	return d.jsonBody(v, h, f, rec)
}

func sseCarriesError(data []byte) bool {
	return bytes.Contains(data, []byte(`"error"`)) || bytes.Contains(data, []byte(`"isError":true`)) ||
		bytes.Contains(data, []byte(`"failed"`)) || bytes.Contains(data, []byte(`TASK_STATE_FAILED`)) ||
		// a tool result that carries a skill failure without isError: the
		// type as a JSON string, or inside a JSON text ("aap.error" in a
		// tool's description is no error)
		bytes.Contains(data, []byte(`"aap.error"`)) || bytes.Contains(data, []byte(`aap.error\"`))
}
