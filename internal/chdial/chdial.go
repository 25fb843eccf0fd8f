// Package chdial dials ClickHouse for clickhouse-go with a bound on every
// write.
//
// clickhouse-go sends the blocks of an INSERT before its final Send with no
// deadline on the connection, so a server that stops reading (frozen, or
// behind a network black hole) would block the writer for as long as the
// kernel keeps retransmitting. Dialer's connections give each write its own
// deadline; a deadline the driver sets itself still applies when it is
// earlier.
package chdial

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"
)

// Dialer opens TCP connections, with TLS when TLS is set.
type Dialer struct {
	Timeout      time.Duration // connect and TLS handshake
	WriteTimeout time.Duration // one write; 0 means none
	TLS          *tls.Config
}

// DialContext has the signature of clickhouse.Options.DialContext.
func (d *Dialer) DialContext(ctx context.Context, addr string) (net.Conn, error) {
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if d.TLS != nil {
		cfg := d.TLS
		if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			cfg = cfg.Clone()
			cfg.ServerName = host
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	if d.WriteTimeout <= 0 {
		return c, nil
	}
	return &conn{Conn: c, timeout: d.WriteTimeout}, nil
}

// conn bounds each Write by timeout, or by the write deadline its user set
// when that is earlier. Like net.Conn's, its deadlines may be set from any
// goroutine while another writes (the driver sets one to cancel a query).
type conn struct {
	net.Conn
	timeout time.Duration
	set     atomic.Int64 // the user's write deadline in Unix nanoseconds; 0 for none
}

func (c *conn) remember(t time.Time) {
	if t.IsZero() {
		c.set.Store(0)
		return
	}
	c.set.Store(t.UnixNano())
}

func (c *conn) SetDeadline(t time.Time) error {
	c.remember(t)
	return c.Conn.SetDeadline(t)
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	c.remember(t)
	return c.Conn.SetWriteDeadline(t)
}

func (c *conn) Write(b []byte) (int, error) {
	dl := time.Now().Add(c.timeout)
	if set := c.set.Load(); set != 0 && set < dl.UnixNano() {
		dl = time.Unix(0, set)
	}
	if err := c.Conn.SetWriteDeadline(dl); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}
