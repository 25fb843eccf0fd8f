package main

// Raw wire helpers: an HTTP/1.1 exchange over a plain TCP socket and a gRPC
// call over hand-driven h2c frames. Nothing here re-serializes a response:
// the bytes (HTTP) or header fields in frame order (gRPC) are what the
// server sent.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// httpRequest builds an HTTP/1.1 request with Connection: close so that the
// server ends the exchange by closing the socket.
func httpRequest(method, addr, path string, headers [][2]string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, addr)
	for _, h := range headers {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	if body != nil || method == "POST" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	b.WriteString("Connection: close\r\n\r\n")
	b.Write(body)
	return b.Bytes()
}

// rawHTTP writes req to addr and returns every byte read until the server
// closes the connection (or the deadline passes).
func rawHTTP(addr string, req []byte, timeout time.Duration) ([]byte, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write(req); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	_, err = io.Copy(&out, conn)
	if err != nil && out.Len() == 0 {
		return nil, err
	}
	return out.Bytes(), nil
}

// grpcReply is what one gRPC call produced on the wire.
type grpcReply struct {
	Status   string      // :status of the response HEADERS
	Fields   [][2]string // non-pseudo header fields, in frame order (headers, then trailers)
	Messages [][]byte    // length-prefixed messages from DATA frames (payloads only)
	RST      string      // RST_STREAM error code, if any
}

// Text renders the reply in the gRPC text form of docs/event-contract.md.
func (r *grpcReply) Text() string {
	var b strings.Builder
	if r.Status != "" {
		fmt.Fprintf(&b, "GRPC %s\n", r.Status)
	} else {
		b.WriteString("GRPC\n")
	}
	for _, f := range r.Fields {
		fmt.Fprintf(&b, "%s: %s\n", f[0], f[1])
	}
	return b.String()
}

// grpcFrame prefixes msg with the 5-byte gRPC message header (uncompressed).
func grpcFrame(msg []byte) []byte {
	out := make([]byte, 5+len(msg))
	binary.BigEndian.PutUint32(out[1:5], uint32(len(msg)))
	copy(out[5:], msg)
	return out
}

// rawGRPC performs one gRPC call on a fresh h2c connection. body is the
// complete DATA payload (normally grpcFrame(proto bytes)); md is extra
// request metadata. The response header blocks are HPACK-decoded field by
// field so names, values and order are exactly those sent.
func rawGRPC(addr, path string, md [][2]string, body []byte) (*grpcReply, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(15 * time.Second))
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		return nil, err
	}
	fr := http2.NewFramer(conn, conn)
	fr.ReadMetaHeaders = nil
	if err := fr.WriteSettings(); err != nil {
		return nil, err
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	fields := [][2]string{
		{":method", "POST"}, {":scheme", "http"}, {":path", path}, {":authority", addr},
		{"content-type", "application/grpc"}, {"te", "trailers"}, {"user-agent", "errtrail-capture/1"},
	}
	fields = append(fields, md...)
	for _, f := range fields {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true}); err != nil {
		return nil, err
	}
	if err := fr.WriteData(1, true, body); err != nil {
		return nil, err
	}

	reply := &grpcReply{}
	dec := hpack.NewDecoder(65536, func(f hpack.HeaderField) {
		if f.Name == ":status" {
			if reply.Status == "" {
				reply.Status = f.Value
			}
			return
		}
		reply.Fields = append(reply.Fields, [2]string{f.Name, f.Value})
	})
	var data bytes.Buffer
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return reply, fmt.Errorf("read frame: %w", err)
		}
		ended := false
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = fr.WritePing(true, f.Data)
			}
		case *http2.HeadersFrame:
			if f.StreamID != 1 {
				continue
			}
			if _, err := dec.Write(f.HeaderBlockFragment()); err != nil {
				return reply, err
			}
			ended = f.StreamEnded()
		case *http2.ContinuationFrame:
			if _, err := dec.Write(f.HeaderBlockFragment()); err != nil {
				return reply, err
			}
		case *http2.DataFrame:
			if f.StreamID != 1 {
				continue
			}
			data.Write(f.Data())
			if n := uint32(len(f.Data())); n > 0 {
				_ = fr.WriteWindowUpdate(0, n)
				_ = fr.WriteWindowUpdate(1, n)
			}
			ended = f.StreamEnded()
		case *http2.RSTStreamFrame:
			reply.RST = f.ErrCode.String()
			ended = true
		case *http2.GoAwayFrame:
			ended = true
		}
		if ended {
			break
		}
	}
	// Split the DATA payload into gRPC messages.
	b := data.Bytes()
	for len(b) >= 5 {
		n := int(binary.BigEndian.Uint32(b[1:5]))
		if 5+n > len(b) {
			break
		}
		reply.Messages = append(reply.Messages, b[5:5+n])
		b = b[5+n:]
	}
	return reply, nil
}
