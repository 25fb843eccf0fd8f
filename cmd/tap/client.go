package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
	"syscall"
	"time"
)

// This file holds what the tap does about its clients: the request body's
// read timeout and failures (a client's failure is never the agent's
// error), and the hop-by-hop rule applied to what an event records.

// watchedWriter is the server's writer of a request whose body is
// watched, carrying the watch to proxyError (beneath emit's writer, which
// Unwrap reaches).
type watchedWriter struct {
	http.ResponseWriter
	bw bodyWatch
}

// Unwrap, Flush and FlushError keep the server's writer reachable and
// flushes immediate: the proxy flushes event streams at every write.
func (w *watchedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
func (w *watchedWriter) Flush()                      { _ = w.FlushError() }
func (w *watchedWriter) FlushError() error {
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// bodyWatch is the request body the proxy forwards: each read waits at
// most timeout for the client's next bytes (a stalled body fails with a
// timeout instead of holding the connection), and the first failure other
// than the body's end is kept for proxyError. The proxy's transport reads
// it on its own goroutine, hence the lock.
type bodyWatch struct {
	rc      io.ReadCloser
	ctl     *http.ResponseController
	timeout time.Duration

	mu  sync.Mutex
	err error
}

func (b *bodyWatch) Read(p []byte) (int, error) {
	if b.timeout > 0 {
		_ = b.ctl.SetReadDeadline(time.Now().Add(b.timeout))
	}
	n, err := b.rc.Read(p)
	if err != nil {
		if b.timeout > 0 {
			// No deadline left behind: net/http's own read of the
			// connection, which starts at the body's end, must not time
			// out while the agent answers.
			_ = b.ctl.SetReadDeadline(time.Time{})
		}
		if err != io.EOF {
			b.mu.Lock()
			if b.err == nil {
				b.err = err
			}
			b.mu.Unlock()
		}
	}
	return n, err
}

func (b *bodyWatch) Close() error { return b.rc.Close() }

// failure is the error that broke the body, or nil.
func (b *bodyWatch) failure() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// clientWentAway reports whether a body read failed because the client
// closed or reset its connection (as opposed to sending bytes that are no
// valid body).
func clientWentAway(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, http.ErrBodyReadAfterClose) ||
		strings.Contains(err.Error(), "client disconnected") // HTTP/2: the stream was reset
}

// hopByHop are the request headers that concern one connection only
// (RFC 9110 §7.6.1): the proxy never forwards them, so no event records
// them. Te and Upgrade are left for the proxy, which reads them to forward
// trailers support and upgrades; they are never recorded either.
var hopByHop = []string{"Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Trailer"}

// withoutConnectionListed returns a copy of h without the fields the
// client's Connection header lists (and the other hop-by-hop fields): the
// proxy strips them before the agent sees the request, so the event must
// not record them either (a "Connection: X-Caller" would otherwise name a
// caller the agent never saw).
func withoutConnectionListed(h http.Header) http.Header {
	out := h.Clone()
	for _, v := range h["Connection"] {
		for _, name := range strings.Split(v, ",") {
			name = textproto.TrimString(name)
			switch {
			case name == "", strings.EqualFold(name, "Connection"), strings.EqualFold(name, "Te"), strings.EqualFold(name, "Upgrade"):
				continue
			}
			out.Del(name)
		}
	}
	for _, name := range hopByHop {
		out.Del(name)
	}
	return out
}

// isHopByHop reports whether a request header is hop-by-hop whatever the
// client says, so a flag may not name it as a header to record.
func isHopByHop(name string) bool {
	for _, n := range append(hopByHop, "Connection", "Te", "Upgrade", "Transfer-Encoding") {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}
