package emit

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Handler wraps an agent's HTTP handler: every error reply it sends is
// published to sink as an event of source kind agent (unless cfg says
// otherwise). Replies reach the client exactly as the handler writes them,
// when it writes them; see the package documentation for what is inspected
// and what it costs.
func Handler(next http.Handler, sink Sink, cfg Config) http.Handler {
	cfg.defaults(KindAgent)
	o := NewObserver(sink, cfg.Source)
	o.IdempotencyHeader = cfg.IdempotencyHeader
	return &handler{next: next, cfg: cfg, obs: o}
}

// Middleware is Handler in the func(http.Handler) http.Handler form.
func Middleware(sink Sink, cfg Config) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler { return Handler(next, sink, cfg) }
}

type handler struct {
	next http.Handler
	cfg  Config
	obs  *Observer
	pool sync.Pool
}

// Capture modes of a reply, decided when its status and Content-Type are
// known.
const (
	modeUnknown = iota // no header written yet
	modeSniff          // no Content-Type: decided at the first Write, as net/http sniffs
	modePass           // a success that is not inspected: no work per Write
	modeError          // status >= 400: the body is copied for the event
	modeProbe          // a JSON success: copied until it is known to be a result or an error
	modeSSE            // an event stream: each event inspected as it passes
)

// exchange is one request's state; pooled. It is the ResponseWriter the
// wrapped handler sees.
type exchange struct {
	h        *handler
	w        http.ResponseWriter
	r        *http.Request
	status   int
	mode     uint8
	hijacked bool
	over     bool // the capture passed its bound
	done     bool // the event is published (at the bound, before the handler returned)
	needCT   bool // an error body without Content-Type: record the sniffed one
	observed time.Time
	headers  []Header
	body     []byte
	sse      SSEScanner
	req      reqTee
	ev       Event  // the error reply's event, built in place
	endpoint []byte // the event's endpoint before the observer cleans it
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Skip != nil && h.cfg.Skip(r) {
		h.next.ServeHTTP(w, r)
		return
	}
	e, _ := h.pool.Get().(*exchange)
	if e == nil {
		e = &exchange{h: h}
	}
	e.w, e.r = w, r
	body := r.Body
	tee := body != nil && body != http.NoBody
	if tee {
		e.req.reset(body, h.cfg.MaxRequestBytes)
		r.Body = &e.req
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		// The handler panicked: net/http/httputil.ReverseProxy aborts with
		// http.ErrAbortHandler when the body's copy fails (the upstream
		// closed mid-body, or the client went away). The error reply seen
		// so far is still the agent's: published, marked cut. The exchange
		// is not pooled again.
		p := recover()
		if e.mode == modeError {
			e.finish(BodyCut)
		} else if e.mode == modeSSE {
			e.finish("")
		}
		if p != nil {
			panic(p)
		}
	}()
	h.next.ServeHTTP(e, r)
	returned = true
	if tee {
		r.Body = body
	}
	if e.mode > modePass { // inspected: maybe an error to publish
		incomplete := ""
		if e.over {
			incomplete = BodyTooLarge
		}
		e.finish(incomplete)
		e.reset()
	}
	if tee {
		e.req.rc = nil
		e.req.buf = e.req.buf[:0]
	}
	e.w, e.r = nil, nil
	e.status, e.mode, e.hijacked = 0, modeUnknown, false
	h.pool.Put(e)
}

// reset clears what an inspected reply left; a reply that passed
// untouched left nothing but its mode and status.
func (e *exchange) reset() {
	e.over, e.needCT, e.done = false, false, false
	e.observed = time.Time{}
	clear(e.headers)
	e.headers = e.headers[:0]
	if cap(e.body) > 256<<10 {
		e.body = nil // do not pin a large error body in the pool
	}
	e.body = e.body[:0]
}

func (e *exchange) Header() http.Header { return e.w.Header() }

// Unwrap lets http.ResponseController reach the server's writer.
func (e *exchange) Unwrap() http.ResponseWriter { return e.w }

func (e *exchange) WriteHeader(code int) {
	if e.mode != modeUnknown || code < 200 && code != http.StatusSwitchingProtocols {
		e.w.WriteHeader(code) // informational, or superfluous (net/http logs it)
		return
	}
	e.status = code
	e.decide(nil)
	e.w.WriteHeader(code)
}

// decide picks the capture mode from the status and Content-Type; first is
// the first body chunk when the type has to be sniffed.
func (e *exchange) decide(first []byte) {
	hdr := e.w.Header()
	ctype := ""
	v, haveCT := hdr["Content-Type"]
	if len(v) > 0 {
		ctype = v[0]
	}
	// net/http sniffs the type of a body sent without one (and not chunked
	// by the handler); the event must say what the client received.
	sniff := !haveCT && len(hdr["Transfer-Encoding"]) == 0
	if sniff {
		if first == nil && !IsErrorStatus(e.status) {
			e.mode = modeSniff
			return
		}
		if first != nil {
			ctype = http.DetectContentType(first)
		}
	}
	switch kind := KindOf(ctype); {
	case IsErrorStatus(e.status):
		e.mode = modeError
	case kind == BodyJSON:
		e.mode = modeProbe
	case kind == BodySSE:
		e.mode = modeSSE
		e.sse.Reset(e.h.cfg.MaxProbeBytes)
	case first != nil && strings.HasPrefix(ctype, "text/plain") && firstNonSpace(first) == '{':
		e.mode = modeProbe // JSON sent without its media type (a2a-go v0.3 compat)
	default:
		e.mode = modePass
		return
	}
	e.observed = time.Now()
	e.headers = snapHeaders(e.headers[:0], hdr) // filtered and sorted in finish, for an error only
	if sniff {
		if first != nil {
			e.headers = append(e.headers, Header{"Content-Type", ctype})
		} else {
			e.needCT = true // an error status: sniffed at the first Write
		}
	}
}

func (e *exchange) Write(p []byte) (int, error) {
	switch e.mode {
	case modeUnknown:
		e.status = http.StatusOK
		e.decide(nil)
		if e.mode == modeSniff && len(p) > 0 {
			e.decide(p)
		}
	case modeSniff:
		if len(p) > 0 {
			e.decide(p)
		}
	}
	if e.needCT && len(p) > 0 {
		e.headers = append(e.headers, Header{"Content-Type", http.DetectContentType(p)})
		e.needCT = false
	}
	n, err := e.w.Write(p)
	if e.mode > modePass {
		e.inspect(p[:n])
	}
	return n, err
}

func (e *exchange) inspect(p []byte) {
	switch e.mode {
	case modeError:
		if e.over {
			return
		}
		if len(e.body)+len(p) > e.h.cfg.MaxBodyBytes {
			// Published now, not when the body ends: an endless error
			// stream would never be.
			e.over = true
			e.finish(BodyTooLarge)
			return
		}
		e.body = append(e.body, p...)
	case modeProbe:
		if len(e.body)+len(p) > e.h.cfg.MaxProbeBytes {
			e.mode = modePass // too large to hold for inspection: a success
			e.body = e.body[:0]
			return
		}
		e.body = append(e.body, p...)
	case modeSSE:
		e.sse.Write(p)
	}
}

// Flush keeps http.Flusher working: the handler's flushes reach the client
// (nothing is ever held back here).
func (e *exchange) Flush() {
	if e.mode == modeUnknown {
		e.WriteHeader(http.StatusOK)
	}
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
		return
	}
	_ = http.NewResponseController(e.w).Flush()
}

// Hijack keeps http.Hijacker working; a hijacked connection is not
// inspected.
func (e *exchange) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	var c net.Conn
	var rw *bufio.ReadWriter
	var err error
	if hj, ok := e.w.(http.Hijacker); ok {
		c, rw, err = hj.Hijack()
	} else {
		c, rw, err = http.NewResponseController(e.w).Hijack()
	}
	if err == nil {
		e.hijacked = true
	}
	return c, rw, err
}

// ReadFrom keeps io.ReaderFrom (sendfile) for replies that are not
// inspected, and copies through Write for the others.
func (e *exchange) ReadFrom(src io.Reader) (int64, error) {
	if e.mode == modePass {
		if rf, ok := e.w.(io.ReaderFrom); ok {
			return rf.ReadFrom(src)
		}
	}
	return io.Copy(writeOnly{e}, src)
}

type writeOnly struct{ io.Writer }

// errorBody returns the body to publish for a reply captured in mode (the
// middleware's and the transport's capture alike), or false when the reply
// is no error. An incomplete body (incomplete != "") is left out: cut in
// two, it would not decode.
func errorBody(mode uint8, incomplete string, body []byte, sse *SSEScanner) ([]byte, bool) {
	switch mode {
	case modeError:
		if incomplete != "" {
			return nil, true
		}
		return body, true
	case modeProbe:
		return body, incomplete == "" && JSONIsError(body)
	case modeSSE:
		sse.End()
		if !sse.Found() {
			return nil, false
		}
		return sse.ErrorEvent(), true
	}
	return nil, false
}

// finish publishes the reply's event, once: when the handler returns, when
// the error body passes its bound (incomplete BodyTooLarge, the handler
// still running) or when the handler aborts (BodyCut).
func (e *exchange) finish(incomplete string) {
	if e.hijacked || e.done {
		return
	}
	e.done = true
	body, ok := errorBody(e.mode, incomplete, e.body, &e.sse)
	if !ok {
		return
	}
	if incomplete != "" {
		body = nil
	}
	r := e.r
	cfg := &e.h.cfg
	var info RequestInfo
	var reqBody []byte
	if incomplete == "" {
		e.req.complete(r)
		reqBody = e.req.buf
	} else {
		// The handler may still be reading the request body (or the
		// client is gone): the ids come from what arrived so far.
		reqBody = e.req.snapshot()
	}
	binding := ""
	if ParseJSONRPC(reqBody, &info) {
		binding = BindingJSONRPC
	} else if ParseRoute(r.Method, r.URL.Path, reqBody, &info) {
		binding = BindingHTTP
	}
	FromHeaders(r.Header, cfg.RequestIDHeader, cfg.AttemptHeader, cfg.IdempotencyHeader, &info)
	sortHeaders(e.headers)
	ev := &e.ev
	*ev = Event{
		ObservedAt: e.observed,
		Agent:      cfg.agent(r),
		Endpoint:   cfg.Endpoint,
		Method:     info.Method,
		Attempt:    info.Attempt,
		Request:    info.Request,
		Reply:      Reply{Binding: binding, HTTPStatus: e.status, Headers: e.headers, Body: body, BodyIncomplete: incomplete},
	}
	if cfg.EndpointFunc != nil {
		ev.Endpoint = cfg.EndpointFunc(r)
	}
	if ev.Endpoint == "" {
		scheme := "http://"
		if r.TLS != nil {
			scheme = "https://"
		}
		e.endpoint = append(append(append(e.endpoint[:0], scheme...), r.Host...), r.URL.Path...)
		ev.Endpoint = bstr(e.endpoint) // the observer replaces it with its cleaned copy
	}
	if cfg.TraceContext != nil {
		if tr, sp := cfg.TraceContext(r); validHexID(tr, 32) && validHexID(sp, 16) {
			ev.Request.TraceID, ev.Request.SpanID = tr, sp
		}
	}
	if cfg.Caller != nil {
		ev.Caller = cfg.Caller(r)
	}
	e.h.obs.Publish(ev)
	*ev = Event{}
}

// DropCounter is implemented by sinks that count events the builders had
// to drop before publishing. A sink that wraps another (to count or
// filter) should implement it by passing the count on.
type DropCounter interface {
	CountDrop(reason string)
}

// reqTee copies the first bytes of a request body as the handler reads it,
// for the ids; the handler reads exactly what it would without it. mu
// guards buf against an event published while the handler (or a
// transport's goroutine) still reads the body.
type reqTee struct {
	mu  sync.Mutex
	rc  io.ReadCloser
	buf []byte
	max int
	eof bool
}

func (t *reqTee) reset(rc io.ReadCloser, max int) {
	t.rc, t.buf, t.max, t.eof = rc, t.buf[:0], max, false
}

// snapshot returns a copy of the bytes read so far.
func (t *reqTee) snapshot() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}

func (t *reqTee) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if room := t.max - len(t.buf); room > 0 && n > 0 {
		t.mu.Lock()
		t.buf = append(t.buf, p[:min(n, room)]...)
		t.mu.Unlock()
	}
	if err == io.EOF {
		t.eof = true
	}
	return n, err
}

func (t *reqTee) Close() error { return t.rc.Close() }

// complete reads the rest of the bounded prefix when the handler answered
// without reading the body (a rate limiter in front, say), so the event
// still has the request's ids. Never with Expect: 100-continue: that client
// waits for us and would send nothing.
func (t *reqTee) complete(r *http.Request) {
	if t.rc == nil || t.eof || len(t.buf) >= t.max || r.Header.Get("Expect") != "" {
		return
	}
	var chunk [4096]byte
	for len(t.buf) < t.max {
		n, err := t.rc.Read(chunk[:min(len(chunk), t.max-len(t.buf))])
		t.buf = append(t.buf, chunk[:n]...)
		if err != nil {
			return
		}
	}
}
