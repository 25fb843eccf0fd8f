package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"net"
)

// ch-go v0.75.0 writes the Query packet's client-info block only from
// protocol revision 54420 (its FeatureClientWriteInfo), while servers read
// it from 54032 on; clickhouse-go writes it from 54032. Against ClickHouse
// 18.16 (revision 54412) every ch-go query therefore fails with
// "UNKNOWN_SETTING (115)". For the measurement only, helloShim lets ch-go
// believe the server speaks 54420: it rewrites the revision in the server's
// Hello packet (both numbers are 3-byte varints, so no length changes). At
// 54420 ch-go writes exactly the client-info fields an 18.16 server reads;
// the one other thing 54420 changes, two extra fields in Progress packets,
// does not arise in these INSERTs (ch-verify compares what each driver
// stored). This is a measurement aid, not something to ship.

const (
	revServer = 54412
	revClaim  = 54420
)

type shimDialer struct{ patched *bool }

func (d shimDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &shimConn{Conn: c, r: bufio.NewReaderSize(c, 64<<10), patched: d.patched}, nil
}

type shimConn struct {
	net.Conn
	r       *bufio.Reader
	done    bool
	pending []byte
	patched *bool
}

func (c *shimConn) Read(p []byte) (int, error) {
	if !c.done {
		c.done = true
		hello, err := c.readHello()
		if err != nil {
			return 0, err
		}
		c.pending = hello
	}
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.r.Read(p)
}

// readHello reads the head of the server's Hello packet (packet type, name,
// major, minor, revision) and rewrites the revision.
func (c *shimConn) readHello() ([]byte, error) {
	var out []byte
	uv := func() (uint64, []byte, error) {
		start := len(out)
		v, err := binary.ReadUvarint(byteReader{c})
		if err != nil {
			return 0, nil, err
		}
		out = binary.AppendUvarint(out, v)
		return v, out[start:], nil
	}
	typ, _, err := uv()
	if err != nil {
		return nil, err
	}
	if typ != 0 { // not Hello (an exception): pass through unchanged
		return out, nil
	}
	n, _, err := uv()
	if err != nil {
		return nil, err
	}
	name := make([]byte, n)
	if _, err := ioReadFull(c.r, name); err != nil {
		return nil, err
	}
	out = append(out, name...)
	if _, _, err := uv(); err != nil { // major
		return nil, err
	}
	if _, _, err := uv(); err != nil { // minor
		return nil, err
	}
	rev, raw, err := uv()
	if err != nil {
		return nil, err
	}
	if rev == revServer {
		claim := binary.AppendUvarint(nil, revClaim)
		if len(claim) != len(raw) {
			return nil, fmt.Errorf("shim: varint lengths differ")
		}
		copy(raw, claim)
		*c.patched = true
	}
	return out, nil
}

type byteReader struct{ c *shimConn }

func (b byteReader) ReadByte() (byte, error) { return b.c.r.ReadByte() }

func ioReadFull(r *bufio.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
