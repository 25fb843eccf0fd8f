package emittest

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"regexp"
	"sync"
)

// Wire is a test HTTP client that records the bytes each response arrived
// as (one connection per request), to decode "what the client received on
// the wire".
type Wire struct {
	mu    sync.Mutex
	conns []*recConn
	*http.Client
}

type recConn struct {
	net.Conn
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *recConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.buf.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

// NewWire returns a Wire.
func NewWire() *Wire {
	w := &Wire{}
	var d net.Dialer
	tr := &http.Transport{DisableKeepAlives: true, DisableCompression: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			rc := &recConn{Conn: c}
			w.mu.Lock()
			w.conns = append(w.conns, rc)
			w.mu.Unlock()
			return rc, nil
		}}
	w.Client = &http.Client{Transport: tr}
	return w
}

// Last returns the bytes of the most recent response.
func (w *Wire) Last() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.conns[len(w.conns)-1]
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.buf.Bytes()...)
}

var dateLine = regexp.MustCompile(`(?m)^Date: .*\r\n`)

// WithoutDate drops the Date header, the one field two runs differ in.
func WithoutDate(b []byte) []byte { return dateLine.ReplaceAll(b, nil) }
