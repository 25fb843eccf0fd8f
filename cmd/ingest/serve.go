package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/internal/cmdkit"
	"github.com/prometheus/client_golang/prometheus"
)

// readiness is the answer of /readyz. The HTTP server starts before the
// pipeline exists and its handlers run on their own goroutines, so the
// pipeline is published through an atomic pointer: until set is called
// the answer is "starting", then whatever the pipeline reports.
type readiness struct {
	pipe atomic.Pointer[ingest.Pipeline]
}

func (r *readiness) set(p *ingest.Pipeline) { r.pipe.Store(p) }

// check returns nil when ready, else why not.
func (r *readiness) check() error {
	pipe := r.pipe.Load()
	if pipe == nil {
		return errors.New("starting")
	}
	if err := pipe.Failure(); err != nil {
		return err
	}
	if !pipe.Ready() {
		return errors.New("not consuming (starting, stopping, or not yet in the consumer group)")
	}
	return nil
}

// testHookServing, when a test sets it, is called with the HTTP server's
// address once it accepts requests, before run builds the pipeline.
var testHookServing func(addr net.Addr)

// serveHTTP listens on --http.listen-address and serves /metrics from reg,
// /healthz, /readyz from ready and, with --http.pprof, Go's profiles. A
// failure to listen is logged, and the caller exits 1.
func serveHTTP(o *options, reg *prometheus.Registry, ready *readiness, log *slog.Logger) (*http.Server, bool) {
	ln, err := net.Listen("tcp", *o.listen)
	if err != nil {
		log.Error("listen", "address", *o.listen, "err", err)
		return nil, false
	}
	handler := cmdkit.Ops(reg, func() (string, error) { return "", ready.check() })
	if *o.pprof {
		mux := http.NewServeMux()
		mux.Handle("/", handler)
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		handler = mux
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server", "err", err)
		}
	}()
	if testHookServing != nil {
		testHookServing(ln.Addr())
	}
	return srv, true
}

// stopHTTP lets requests in flight finish, for at most 5s.
func stopHTTP(srv *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
}
