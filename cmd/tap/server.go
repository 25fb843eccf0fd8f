package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/errtrail/errtrail/emit"
	"github.com/errtrail/errtrail/emit/emitprom"
	"github.com/errtrail/errtrail/emit/kafkapub"
	"github.com/errtrail/errtrail/internal/cmdkit"
)

// tapMetrics are the tap's own counters; labels are fixed values.
type tapMetrics struct {
	requests       *prometheus.CounterVec // protocol: http, grpc
	errorReplies   *prometheus.CounterVec // protocol: http, grpc
	upstreamErrs   prometheus.Counter
	clientFailures *prometheus.CounterVec // reason: bad_body, gone, timeout
	incomplete     *prometheus.CounterVec // reason: too_large, cut

	// The series every request counts, resolved once: WithLabelValues
	// hashes the labels and takes a lock at every call (6 % of the tap's
	// handler in a CPU profile).
	reqHTTP, reqGRPC     prometheus.Counter
	replyHTTP, replyGRPC prometheus.Counter
}

// Reasons of errtrail_tap_client_failures_total: requests that failed on
// the client's side, which are never the agent's error and never
// published.
const (
	clientBadBody = "bad_body" // the request body could not be read (malformed chunked framing, …): answered 400
	clientGone    = "gone"     // the client went away before the reply
	clientTimeout = "timeout"  // the request body stalled past --http.body-read-timeout: answered 408
)

func newTapMetrics(reg prometheus.Registerer) *tapMetrics {
	m := &tapMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "errtrail", Subsystem: "tap", Name: "requests_total",
			Help: "Requests proxied, by protocol (http, grpc)."}, []string{"protocol"}),
		errorReplies: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "errtrail", Subsystem: "tap", Name: "error_replies_total",
			Help: "Error replies seen and handed to the publisher, by protocol (http, grpc)."}, []string{"protocol"}),
		upstreamErrs: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "errtrail", Subsystem: "tap", Name: "upstream_failures_total",
			Help: "Requests the upstream could not be reached for (answered 502 by the tap, not published)."}),
		clientFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "errtrail", Subsystem: "tap", Name: "client_failures_total",
			Help: "Requests that failed on the client's side (bad_body, gone, timeout), not published."}, []string{"reason"}),
		incomplete: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "errtrail", Subsystem: "tap", Name: "incomplete_replies_total",
			Help: "Error replies published without their body, by reason (too_large, cut)."}, []string{"reason"}),
	}
	m.reqHTTP, m.reqGRPC = m.requests.WithLabelValues("http"), m.requests.WithLabelValues("grpc")
	m.replyHTTP, m.replyGRPC = m.errorReplies.WithLabelValues("http"), m.errorReplies.WithLabelValues("grpc")
	for _, r := range []string{clientBadBody, clientGone, clientTimeout} {
		m.clientFailures.WithLabelValues(r)
	}
	for _, r := range []string{emit.BodyTooLarge, emit.BodyCut} {
		m.incomplete.WithLabelValues(r)
	}
	reg.MustRegister(m.requests, m.errorReplies, m.upstreamErrs, m.clientFailures, m.incomplete)
	return m
}

// countedSink counts the events handed to the publisher and passes on the
// builders' drop counts (emit.DropCounter), so they reach the publisher's
// errtrail_emit_dropped_total.
type countedSink struct {
	m    *tapMetrics
	next emit.Sink
}

func (s countedSink) Publish(ev *emit.Event) bool {
	if ev.Reply.GRPC != nil {
		s.m.replyGRPC.Inc()
	} else {
		s.m.replyHTTP.Inc()
	}
	if r := ev.Reply.BodyIncomplete; r != "" {
		s.m.incomplete.WithLabelValues(r).Inc()
	}
	return s.next.Publish(ev)
}

func (s countedSink) CountDrop(reason string) {
	if d, ok := s.next.(emit.DropCounter); ok {
		d.CountDrop(reason)
	}
}

// tap is the proxy: emit.Handler around an httputil.ReverseProxy for
// HTTP, JSON-RPC and SSE; gRPC replies observed from their trailers.
type tap struct {
	o            *options
	upstreamBase string // scheme://host[/base path], without a trailing '/'

	m       *tapMetrics
	obs     *emit.Observer // gRPC events
	proxy   *httputil.ReverseProxy
	handler http.Handler
	log     *slog.Logger
}

func isGRPC(r *http.Request) bool {
	return r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc")
}

// newTap builds the proxy publishing to sink.
func newTap(o *options, sink emit.Sink, reg prometheus.Registerer, log *slog.Logger) *tap {
	t := &tap{o: o, m: newTapMetrics(reg), log: log,
		upstreamBase: o.upstream.Scheme + "://" + o.upstream.Host + strings.TrimSuffix(o.upstream.EscapedPath(), "/")}
	counted := countedSink{m: t.m, next: sink}
	t.obs = emit.NewObserver(counted, o.source)
	t.obs.IdempotencyHeader = o.idempotency

	t.proxy = &httputil.ReverseProxy{
		Rewrite:   rewriteTo(o),
		Transport: upstreamTransport(o),
		// Event streams and replies of unknown length (gRPC, chunked) are
		// flushed at every write the agent makes; a reply of known length
		// goes out as the server's buffer fills, which holds nothing back
		// that the client could use earlier.
		FlushInterval:  0,
		BufferPool:     copyBuffers{},
		ModifyResponse: t.modifyResponse,
		ErrorHandler:   t.proxyError,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	cfg := emit.Config{
		Source:            o.source,
		Agent:             o.agent,
		EndpointFunc:      t.endpoint,
		RequestIDHeader:   o.requestID,
		AttemptHeader:     o.attempt,
		IdempotencyHeader: o.idempotency,
		Skip:              isGRPC, // observed by modifyResponse
	}
	if o.callerHeader != "" {
		cfg.Caller = emit.CallerFromHeader(o.callerHeader)
	}
	t.handler = emit.Handler(t.proxy, counted, cfg)
	return t
}

// rewriteTo sends a request to the upstream, with the Host its client sent.
func rewriteTo(o *options) func(*httputil.ProxyRequest) {
	return func(pr *httputil.ProxyRequest) {
		pr.SetURL(o.upstream)
		pr.Out.Host = pr.In.Host // unchanged: the agent sees the Host its client sent
	}
}

// upstreamTransport is how the tap reaches the agent: HTTP/1.1 with a pool
// of idle connections sized for load, and HTTP/2 (h2c on http upstreams)
// for gRPC or --upstream.http2. TestMeasureTapRatio's bare proxy uses the
// same.
func upstreamTransport(o *options) http.RoundTripper {
	h1 := http.DefaultTransport.(*http.Transport).Clone()
	// net/http keeps 2 idle connections per host by default: under a load
	// of concurrent requests every other one would open a new connection
	// to the agent (measured: p99 +7 ms at 2,000 requests/s).
	h1.MaxIdleConns, h1.MaxIdleConnsPerHost = o.upstreamIdle, o.upstreamIdle
	h2 := http.DefaultTransport.(*http.Transport).Clone()
	h2.Protocols = new(http.Protocols)
	h2.Protocols.SetHTTP2(true)            // https upstreams
	h2.Protocols.SetUnencryptedHTTP2(true) // http upstreams: h2c with prior knowledge
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if o.upstreamHTTP2 || isGRPC(r) {
			return h2.RoundTrip(r)
		}
		return h1.RoundTrip(r)
	})
}

// copyBuffers lends the proxy its 32 KiB copy buffers (without a pool it
// allocates one per request).
type copyBuffers struct{}

var copyBufferPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (copyBuffers) Get() []byte  { return *copyBufferPool.Get().(*[]byte) }
func (copyBuffers) Put(b []byte) { copyBufferPool.Put(&b) }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (t *tap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isGRPC(r) {
		t.m.reqGRPC.Inc()
		// Keys without values stop net/http from adding a Date and a
		// "content-length: 0" to a Trailers-Only reply, which the gRPC
		// client would see as trailers the agent never sent.
		h := w.Header()
		h["Date"], h["Content-Length"] = nil, nil
		gw := &grpcWriter{ResponseWriter: w}
		w, r = gw, r.WithContext(context.WithValue(r.Context(), grpcWriterKey{}, gw))
	} else {
		t.m.reqHTTP.Inc()
		// The request body is watched: its failure is the client's (a
		// stalled or broken body), never an agent's error. A gRPC stream
		// may idle by design and gets no body timeout. The watch rides on
		// the writer, which reaches proxyError, rather than in a copy of
		// the request with a new context (one allocation of 80 bytes
		// instead of three of about 400 in all).
		if r.Body != nil && r.Body != http.NoBody {
			ww := &watchedWriter{ResponseWriter: w}
			ww.bw.rc, ww.bw.ctl, ww.bw.timeout = r.Body, http.NewResponseController(w), t.o.bodyReadTimeout
			r.Body = &ww.bw
			w = ww
		}
		if len(r.Header["Connection"]) > 0 {
			r.Header = withoutConnectionListed(r.Header)
		}
	}
	t.handler.ServeHTTP(w, r)
}

// endpoint is the event's endpoint: the configured upstream and the path
// the request was forwarded to, never the client's Host or absolute URI.
func (t *tap) endpoint(r *http.Request) string {
	return t.upstreamBase + r.URL.Path
}

// proxyError answers a request the proxy could not complete. None of these
// replies is the agent's, so none is published: it is written beneath the
// emit middleware and counted instead. A failure of the client (its body
// broke, stalled, or it went away) is the client's; anything else is the
// upstream that could not be reached (502).
func (t *tap) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if u, ok := w.(interface{ Unwrap() http.ResponseWriter }); ok {
		w = u.Unwrap() // the server's writer: the middleware never sees this reply
	}
	var bodyErr error
	if ww, ok := w.(*watchedWriter); ok {
		bodyErr = ww.bw.failure()
	}
	switch {
	case bodyErr != nil && isTimeout(bodyErr):
		t.m.clientFailures.WithLabelValues(clientTimeout).Inc()
		t.log.Info("request body stalled", "method", r.Method, "path", r.URL.Path)
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusRequestTimeout)
	case bodyErr != nil && clientWentAway(bodyErr), bodyErr == nil && (r.Context().Err() != nil || errors.Is(err, context.Canceled)):
		t.m.clientFailures.WithLabelValues(clientGone).Inc()
	case bodyErr != nil:
		t.m.clientFailures.WithLabelValues(clientBadBody).Inc()
		t.log.Info("request body unreadable", "method", r.Method, "path", r.URL.Path, "err", bodyErr)
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusBadRequest)
	default:
		t.m.upstreamErrs.Inc()
		t.log.Warn("upstream request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		w.WriteHeader(http.StatusBadGateway)
	}
}

type grpcWriterKey struct{}

// grpcWriter keeps a Trailers-Only gRPC reply Trailers-Only: the proxy's
// immediate flush would send its headers (which hold grpc-status) without
// END_STREAM, and the client would find no trailers. Flushes are dropped
// for such a reply; it has no body, so nothing waits for them.
type grpcWriter struct {
	http.ResponseWriter
	trailersOnly bool
}

func (w *grpcWriter) Flush() { _ = w.FlushError() }

func (w *grpcWriter) FlushError() error {
	if w.trailersOnly {
		return nil
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *grpcWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// modifyResponse watches gRPC replies: a Trailers-Only reply carries its
// status in the headers; otherwise the trailers are read when the body
// ends, as the proxy copies them on. Nothing is buffered or changed.
func (t *tap) modifyResponse(resp *http.Response) error {
	if resp.Request == nil || !isGRPC(resp.Request) {
		return nil
	}
	if resp.Header.Get("Grpc-Status") != "" {
		if gw, ok := resp.Request.Context().Value(grpcWriterKey{}).(*grpcWriter); ok {
			gw.trailersOnly = true
		}
		t.grpcReply(resp.Request, resp.Header, nil)
		return nil
	}
	resp.Body = &grpcBody{ReadCloser: resp.Body, t: t, resp: resp}
	return nil
}

// grpcBody reports the reply's trailers once the body has ended.
type grpcBody struct {
	io.ReadCloser
	t    *tap
	resp *http.Response
	done bool
}

func (b *grpcBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && !b.done {
		b.done = true
		b.t.grpcReply(b.resp.Request, b.resp.Header, b.resp.Trailer)
	}
	return n, err
}

// grpcReply publishes an event for a non-OK grpc-status, from the
// trailers (or, for Trailers-Only, from the headers) exactly as sent.
func (t *tap) grpcReply(req *http.Request, header, trailer http.Header) {
	src := trailer
	if src.Get("Grpc-Status") == "" {
		src = header
	}
	code, err := strconv.Atoi(strings.TrimSpace(src.Get("Grpc-Status")))
	if err != nil || code == 0 || code < 0 || code > 16 {
		return
	}
	var trs []emit.Header
	for name, vs := range src {
		ln := strings.ToLower(name)
		switch ln {
		case "grpc-status", "grpc-message", "content-type", "content-length", "date":
			continue
		}
		for _, v := range vs {
			trs = append(trs, emit.Header{Name: ln, Value: v})
		}
	}
	var info emit.RequestInfo
	emit.FromHeaders(req.Header, t.o.requestID, t.o.attempt, t.o.idempotency, &info)
	ev := emit.Event{
		Agent:    t.o.agent,
		Endpoint: "grpc://" + t.o.upstream.Host,
		Method:   emit.GRPCMethod(req.URL.Path),
		Attempt:  info.Attempt,
		Request:  info.Request,
		Reply: emit.Reply{Binding: emit.BindingGRPC, HTTPStatus: 200,
			GRPC: &emit.GRPC{Status: code, Message: src.Get("Grpc-Message"), Trailers: sortedHeaders(trs)}},
	}
	if t.o.callerHeader != "" {
		ev.Caller = emit.CallerFromHeader(t.o.callerHeader)(req)
	}
	t.obs.Publish(&ev)
}

func sortedHeaders(hs []emit.Header) []emit.Header {
	for i := 1; i < len(hs); i++ {
		for j := i; j > 0 && hs[j].Name < hs[j-1].Name; j-- {
			hs[j], hs[j-1] = hs[j-1], hs[j]
		}
	}
	return hs
}

// newAdmin serves /metrics from reg, /healthz (200 while the process runs)
// and /readyz (200 while the proxy is serving).
func newAdmin(reg *prometheus.Registry, ready *atomic.Bool) http.Handler {
	return cmdkit.Ops(reg, func() (string, error) {
		if !ready.Load() {
			return "", errors.New("not serving")
		}
		return "", nil
	})
}

// serve proxies and serves the admin endpoints until ctx ends (nil) or a
// server fails (its error), then stops within 10s and flushes the
// publisher. started, when set, is told the two listening addresses.
func serve(ctx context.Context, o *options, log *slog.Logger, started func(proxy, admin string)) error {
	begin := time.Now()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	pub, err := kafkapub.New(kafkapub.Config{Brokers: o.brokers, Topic: o.topic,
		Metrics: emitprom.NewMetrics(reg), Logger: log})
	if err != nil {
		return err
	}
	t := newTap(o, pub, reg, log)

	pl, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	al, err := net.Listen("tcp", o.metricsListen)
	if err != nil {
		pl.Close()
		return err
	}
	var ready atomic.Bool
	protos := new(http.Protocols)
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true) // h2c: gRPC clients go through the tap
	psrv := &http.Server{Handler: t, Protocols: protos, ReadHeaderTimeout: o.headerTimeout, IdleTimeout: o.idleTimeout,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	asrv := &http.Server{Handler: newAdmin(reg, &ready), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 2)
	go func() { served <- psrv.Serve(pl) }()
	go func() { served <- asrv.Serve(al) }()
	ready.Store(true)
	log.Info("listening", "proxy", pl.Addr().String(), "admin", al.Addr().String(), "upstream", o.upstream.Redacted(),
		"agent", o.agent, "source", o.source.Kind, "brokers", strings.Join(o.brokers, ","), "topic", o.topic, "took", time.Since(begin))
	if started != nil {
		started(pl.Addr().String(), al.Addr().String())
	}

	select {
	case <-ctx.Done():
	case err = <-served:
	}
	ready.Store(false)
	log.Info("stopping")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if e := psrv.Shutdown(sctx); e != nil {
		log.Warn("proxy shutdown", "err", e)
	}
	if e := asrv.Shutdown(sctx); e != nil {
		log.Warn("admin shutdown", "err", e)
	}
	if e := pub.Close(sctx); e != nil {
		log.Warn("publisher close: queued events dropped", "err", e)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	log.Info("stopped")
	return err
}
