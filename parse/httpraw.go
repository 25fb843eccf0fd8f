package parse

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/errtrail/errtrail/redact"
)

// This file frames a raw HTTP/1.1 response: status line, headers, and a
// body with Content-Length or chunked framing.

func (d *Decoder) rawHTTP(b []byte, rep *Reply) *DecodeError {
	lineEnd := bytes.IndexByte(b, '\n')
	if lineEnd < 0 {
		return errAt(ErrBadHTTP, "http.status_line", 0, "no end of status line")
	}
	line := trimCR(b[:lineEnd])
	// HTTP/1.1 SP 3DIGIT [SP reason]
	if len(line) < 12 || line[8] != ' ' {
		return errAt(ErrBadHTTP, "http.status_line", 0, "malformed status line")
	}
	// Three digits, the first not 0.
	c0, c1, c2 := line[9]-'0', line[10]-'0', line[11]-'0'
	if c0-1 > 8 || c1 > 9 || c2 > 9 || (len(line) > 12 && line[12] != ' ') {
		return errAt(ErrBadHTTP, "http.status_line", 9, "malformed status code")
	}
	rep.HTTPStatus = int(c0)*100 + int(c1)*10 + int(c2)
	p := lineEnd + 1
	hs := d.sc.hdrs[:0]
	d.sc.hdr, d.sc.hdrRead = hdrInfo{}, true
	chunked := false
	contentLength := -1
	for {
		if p >= len(b) {
			return errAt(ErrBadHTTP, "http.headers", p, "headers not terminated by a blank line")
		}
		e := bytes.IndexByte(b[p:], '\n')
		if e < 0 {
			return errAt(ErrBadHTTP, "http.headers", p, "header line not terminated")
		}
		hl := trimCR(b[p : p+e])
		start := p
		p += e + 1
		if len(hl) == 0 {
			break
		}
		colon := bytes.IndexByte(hl, ':')
		if colon <= 0 {
			return errAt(ErrBadHTTP, "http.headers", start, "header line without a name")
		}
		name := bytesToString(hl[:colon])
		val := bytesToString(trimSpace(hl[colon+1:]))
		use := redact.HeaderValue // the framing headers are kept
		switch {
		case len(name) == 17 && equalFoldASCII(name, "Transfer-Encoding"):
			chunked = strings.Contains(strings.ToLower(val), "chunked")
		case len(name) == 14 && (name == "Content-Length" || equalFoldASCII(name, "Content-Length")): // the constant compare needs no call
			if n, ok := parseIntPrefix([]byte(val)); ok && n >= 0 && isDigits(val) {
				contentLength = int(n)
			}
		default:
			// observe reads neither framing header; for the names it reads
			// it gives the allow-list's answer.
			var read bool
			if use, read = d.sc.hdr.observe(name, val); !read {
				use = keptHeader(name)
			}
		}
		switch use {
		case redact.HeaderDrop:
			continue // not on the allow-list: never kept
		case redact.HeaderName:
			val = "" // its presence is what the decoder reads
		}
		hs = append(hs, Header{name, val})
	}
	d.sc.hdrs = hs
	rep.Headers = hs
	body := b[p:]
	switch {
	case chunked:
		out, err := dechunk(d.sc.body[:0], body)
		if err != nil {
			err.Offset += p
			return err
		}
		d.sc.body = out
		rep.Body = out
	case contentLength >= 0 && contentLength < len(body):
		rep.Body = body[:contentLength]
	default:
		rep.Body = body
	}
	return nil
}

func dechunk(dst, b []byte) ([]byte, *DecodeError) {
	p := 0
	for {
		e := bytes.IndexByte(b[p:], '\n')
		if e < 0 {
			// A capture cut in the middle of a stream: keep what arrived.
			return dst, nil
		}
		sizeLine := bytes.TrimRight(b[p:p+e], "\r")
		if i := bytes.IndexByte(sizeLine, ';'); i >= 0 {
			sizeLine = sizeLine[:i]
		}
		size, err := strconv.ParseInt(strings.TrimSpace(bytesToString(sizeLine)), 16, 64)
		if err != nil || size < 0 {
			return dst, errAt(ErrBadHTTP, "http.body.chunk", p, "malformed chunk size")
		}
		p += e + 1
		if size == 0 {
			return dst, nil
		}
		if int64(len(b)-p) < size {
			return append(dst, b[p:]...), nil
		}
		dst = append(dst, b[p:p+int(size)]...)
		p += int(size)
		if p < len(b) && b[p] == '\r' {
			p++
		}
		if p < len(b) && b[p] == '\n' {
			p++
		}
	}
}

// --- gRPC text form and gRPC replies ---

// trimCR drops the CR of a CRLF line ending.
func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}
