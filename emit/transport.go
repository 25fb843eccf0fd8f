package emit

import (
	"io"
	"net/http"
	"time"
)

// Transport wraps the RoundTripper of a client or a gateway (base nil:
// http.DefaultTransport): every error reply it receives is published to
// sink, with the ids of the outgoing request, as an event of source kind
// client (set cfg.Source.Kind to KindGateway for a gateway). The caller
// reads the reply body exactly as it arrives; the transport looks at the
// bytes as they pass and publishes when the body is read to its end or
// closed.
func Transport(base http.RoundTripper, sink Sink, cfg Config) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	cfg.defaults(KindClient)
	o := NewObserver(sink, cfg.Source)
	o.IdempotencyHeader = cfg.IdempotencyHeader
	return &transport{base: base, cfg: cfg, obs: o}
}

type transport struct {
	base http.RoundTripper
	cfg  Config
	obs  *Observer
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.cfg.Skip != nil && t.cfg.Skip(req) {
		return t.base.RoundTrip(req)
	}
	out := req
	var tee *sharedTee
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		// No way to read the body again: read its first bytes now and send
		// them, then the rest, on a copy of the request (a RoundTripper
		// must not change the caller's). Copying them only as the base
		// transport sends them would miss them when the server answers
		// before reading the body (a rate limiter rejecting at admission),
		// and the event would lose the JSON-RPC method and ids. A body
		// still being produced (a streaming upload) is therefore sent once
		// its first MaxRequestBytes are ready or it ends; Config.Skip such
		// requests.
		tee = &sharedTee{rc: req.Body, max: t.cfg.MaxRequestBytes}
		tee.prefill()
		r2 := *req
		r2.Body = tee
		out = &r2
	}
	resp, err := t.base.RoundTrip(out)
	if err != nil || resp == nil || resp.Body == nil || resp.StatusCode == http.StatusSwitchingProtocols {
		return resp, err
	}
	var mode uint8
	switch kind := KindOf(resp.Header.Get("Content-Type")); {
	case IsErrorStatus(resp.StatusCode):
		mode = modeError
	case kind == BodyJSON:
		mode = modeProbe
	case kind == BodySSE:
		mode = modeSSE
	default:
		return resp, nil // a success that is not inspected: untouched
	}
	tap := &respTap{t: t, req: req, tee: tee, rc: resp.Body, mode: mode, status: resp.StatusCode, observed: time.Now()}
	tap.headers = AppendHeaders(nil, resp.Header, t.cfg.IdempotencyHeader)
	if mode == modeSSE {
		tap.sse.Reset(t.cfg.MaxProbeBytes)
	}
	resp.Body = tap
	return resp, nil
}

// respTap is the reply body the caller reads.
type respTap struct {
	t        *transport
	req      *http.Request
	tee      *sharedTee
	rc       io.ReadCloser
	mode     uint8
	status   int
	observed time.Time
	headers  []Header
	body     []byte
	over     bool
	eof      bool
	done     bool
	sse      SSEScanner
}

func (b *respTap) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.inspect(p[:n])
	switch {
	case err == io.EOF:
		b.eof = true
		b.finish("")
	case err != nil && b.mode == modeError:
		b.finish(BodyCut) // the connection closed mid-body: the error reply still counts
	}
	return n, err
}

func (b *respTap) inspect(p []byte) {
	if len(p) == 0 {
		return
	}
	cfg := &b.t.cfg
	switch b.mode {
	case modeError:
		if b.over {
			return
		}
		if len(b.body)+len(p) > cfg.MaxBodyBytes {
			b.over = true
			b.finish(BodyTooLarge) // now: an endless error stream would never end
			return
		}
		b.body = append(b.body, p...)
	case modeProbe:
		if len(b.body)+len(p) > cfg.MaxProbeBytes {
			b.mode = modePass
			b.body = nil
			return
		}
		b.body = append(b.body, p...)
	case modeSSE:
		b.sse.Write(p)
	}
}

// Close publishes an error reply the caller did not read to its end: the
// rest of its body (up to the bound) is read first, since the caller gave
// it up.
func (b *respTap) Close() error {
	if !b.done && !b.eof && b.mode == modeError && !b.over {
		var chunk [4096]byte
		for !b.over {
			n, err := b.rc.Read(chunk[:])
			b.inspect(chunk[:n])
			if err != nil {
				b.eof = err == io.EOF
				if !b.eof {
					b.finish(BodyCut)
				}
				break
			}
		}
	}
	if b.eof {
		b.finish("")
	}
	b.done = true
	return b.rc.Close()
}

// finish publishes the reply's event, once: at the end of the body, when
// an error body passes its bound (BodyTooLarge) or breaks off (BodyCut).
func (b *respTap) finish(incomplete string) {
	if b.done {
		return
	}
	b.done = true
	body, ok := errorBody(b.mode, incomplete, b.body, &b.sse)
	if !ok {
		return
	}
	req, cfg := b.req, &b.t.cfg
	var info RequestInfo
	reqBody := b.requestBody()
	binding := ""
	if ParseJSONRPC(reqBody, &info) {
		binding = BindingJSONRPC
	} else if ParseRoute(req.Method, req.URL.Path, reqBody, &info) {
		binding = BindingHTTP
	}
	FromHeaders(req.Header, cfg.RequestIDHeader, cfg.AttemptHeader, cfg.IdempotencyHeader, &info)
	ev := Event{
		ObservedAt: b.observed,
		Agent:      cfg.agent(req),
		Endpoint:   cfg.Endpoint,
		Method:     info.Method,
		Attempt:    info.Attempt,
		Request:    info.Request,
		Reply:      Reply{Binding: binding, HTTPStatus: b.status, Headers: b.headers, Body: body, BodyIncomplete: incomplete},
	}
	if cfg.EndpointFunc != nil {
		ev.Endpoint = cfg.EndpointFunc(req)
	}
	if ev.Endpoint == "" {
		ev.Endpoint = req.URL.String()
	}
	if cfg.TraceContext != nil {
		if tr, sp := cfg.TraceContext(req); validHexID(tr, 32) && validHexID(sp, 16) {
			ev.Request.TraceID, ev.Request.SpanID = tr, sp
		}
	}
	if cfg.Caller != nil {
		ev.Caller = cfg.Caller(req)
	}
	b.t.obs.Publish(&ev)
	b.body = nil
}

// requestBody returns the first bytes of the request body: a fresh copy
// from GetBody, or what the tee saw.
func (b *respTap) requestBody() []byte {
	max := b.t.cfg.MaxRequestBytes
	if b.tee != nil {
		return b.tee.bytes()
	}
	if b.req.GetBody == nil {
		return nil
	}
	rc, err := b.req.GetBody()
	if err != nil || rc == nil {
		return nil
	}
	defer rc.Close()
	out, _ := io.ReadAll(io.LimitReader(rc, int64(max)))
	return out
}

// sharedTee holds the first bytes of a request body (read before the
// request is sent) and serves them, then the rest, to the base transport.
type sharedTee struct {
	rc  io.ReadCloser
	buf []byte // the body's first bytes (prefill)
	off int    // how much of buf Read has served
	err error  // the error that ended prefill (io.EOF: the whole body is in buf)
	max int
}

// prefill reads the body's first max bytes (or all of it) into buf; Read
// serves them before the rest.
func (t *sharedTee) prefill() {
	t.buf = make([]byte, 0, min(t.max, 4096))
	for empty := 0; len(t.buf) < t.max; {
		if len(t.buf) == cap(t.buf) {
			t.buf = append(t.buf, 0)[:len(t.buf)]
		}
		n, err := t.rc.Read(t.buf[len(t.buf):min(cap(t.buf), t.max)])
		t.buf = t.buf[:len(t.buf)+n]
		if err != nil {
			t.err = err
			return
		}
		if n == 0 {
			if empty++; empty == 100 {
				t.err = io.ErrNoProgress
				return
			}
		}
	}
}

// Read serves the prefilled bytes, then the error that ended the prefill,
// or the rest of the body. Only the base transport reads (one goroutine),
// and buf does not change after prefill, so bytes needs no lock with it.
func (t *sharedTee) Read(p []byte) (int, error) {
	if t.off < len(t.buf) {
		n := copy(p, t.buf[t.off:])
		t.off += n
		return n, nil
	}
	if t.err != nil {
		return 0, t.err
	}
	return t.rc.Read(p)
}

func (t *sharedTee) Close() error { return t.rc.Close() }

func (t *sharedTee) bytes() []byte { return append([]byte(nil), t.buf...) }
