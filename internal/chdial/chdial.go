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
// when that is earlier. Like net.Conn's deadlines, it expects one writer.
type conn struct {
	net.Conn
	timeout time.Duration
	set     time.Time // the user's write deadline; zero for none
}

func (c *conn) SetDeadline(t time.Time) error {
	c.set = t
	return c.Conn.SetDeadline(t)
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	c.set = t
	return c.Conn.SetWriteDeadline(t)
}

func (c *conn) Write(b []byte) (int, error) {
	dl := time.Now().Add(c.timeout)
	if !c.set.IsZero() && c.set.Before(dl) {
		dl = c.set
	}
	if err := c.Conn.SetWriteDeadline(dl); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}
