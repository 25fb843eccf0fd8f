package parse

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/errtrail/errtrail/redact"
)

// This file reads gRPC replies: the text form of docs/event-contract.md,
// grpc-status, the percent-encoded grpc-message and grpc-status-details-bin.

func (d *Decoder) grpcText(b []byte, rep *Reply) *DecodeError {
	lineEnd := bytes.IndexByte(b, '\n')
	if lineEnd < 0 {
		lineEnd = len(b)
	}
	first := bytes.TrimSpace(b[:lineEnd])
	if len(first) > 4 {
		if n, ok := parseIntPrefix(bytes.TrimSpace(first[4:])); ok && httpStatusRange(n) {
			rep.HTTPStatus = int(n)
		}
	}
	p := lineEnd + 1
	hs := d.sc.hdrs[:0]
	rep.GRPCStatus = -1
	for p < len(b) {
		e := bytes.IndexByte(b[p:], '\n')
		var hl []byte
		start := p
		if e < 0 {
			hl, p = b[p:], len(b)
		} else {
			hl, p = b[p:p+e], p+e+1
		}
		hl = bytes.TrimRight(hl, "\r")
		if len(hl) == 0 {
			break
		}
		colon := bytes.IndexByte(hl[1:], ':') + 1 // allow ":status"
		if colon <= 0 {
			return errAt(ErrBadGRPC, "grpc.metadata", start, "metadata line without a name")
		}
		name := bytesToString(bytes.TrimSpace(hl[:colon]))
		val := bytesToString(bytes.TrimSpace(hl[colon+1:]))
		switch {
		case name == "grpc-status":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return errAt(ErrBadGRPC, "grpc.grpc-status", start, "grpc-status is not a number")
			}
			rep.GRPCStatus = n
		case name == "grpc-message":
			rep.GRPCMessage = val
		case name == ":status":
			if n, err := strconv.Atoi(val); err == nil && httpStatusRange(int64(n)) {
				rep.HTTPStatus = n
			}
		default:
			switch keptHeader(name) {
			case redact.HeaderValue:
				hs = append(hs, Header{name, val})
			case redact.HeaderName:
				hs = append(hs, Header{name, ""}) // its presence is what the decoder reads
			}
		}
	}
	if rep.GRPCStatus < 0 {
		return errAt(ErrBadGRPC, "grpc.grpc-status", -1, "no grpc-status")
	}
	d.sc.hdrs = hs
	rep.Headers = hs
	rep.GRPCTrailers = hs
	if rep.HTTPStatus == 0 {
		rep.HTTPStatus = 200
	}
	return nil
}

func (d *Decoder) grpcReply(rep *Reply, f *facts, rec *Record) *DecodeError {
	if rep.GRPCStatus == grpcOK {
		// A stream that ended OK: any failure travelled inside a message.
		return errAt(ErrNotAnError, "grpc.grpc-status", -1, "grpc-status is OK")
	}
	rec.Binding = BindingGRPC
	rec.Envelope = EnvGRPCStatus
	rec.GRPCCode = rep.GRPCStatus
	rec.Message = d.redactStr(d.percentDecode(rep.GRPCMessage))
	var bin string
	for _, t := range rep.GRPCTrailers {
		if strings.EqualFold(t.Name, "grpc-status-details-bin") {
			bin = t.Value
			break
		}
	}
	if bin == "" {
		return nil
	}
	if i := strings.IndexByte(bin, ','); i >= 0 {
		bin = bin[:i] // repeated values: the first one
	}
	raw, ok := decodeB64(d.sc.bin[:0], []byte(bin))
	if !ok {
		rec.addFinding(FindGRPCDetailsMismatch)
		return nil
	}
	d.sc.bin = raw
	code, _, err := d.pbStatus(raw, f, rec)
	if err != nil {
		// Unparseable details are ignored, as gRPC clients do.
		f.reset()
		rec.FieldViolations = rec.FieldViolations[:0]
		rec.addFinding(FindGRPCDetailsMismatch)
		return nil
	}
	if code != rep.GRPCStatus {
		// A details code that disagrees with grpc-status is not trusted.
		f.reset()
		rec.FieldViolations = rec.FieldViolations[:0]
		rec.addFinding(FindGRPCDetailsMismatch)
	}
	return nil
}

// percentDecode decodes grpc-message leniently: a bad escape is kept as is.
func (d *Decoder) percentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	ar := &d.sc.ar
	ar.grow(len(s))
	start := len(ar.buf)
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex4([]byte{s[i+1], s[i+2]}) {
			ar.buf = append(ar.buf, byte(hex4([]byte{s[i+1], s[i+2]})))
			i += 2
			continue
		}
		ar.buf = append(ar.buf, s[i])
	}
	return bytesToString(ar.buf[start:])
}

// httpStatusRange reports a number that can be an HTTP status (three
// digits, as the raw HTTP status line requires). Any other number on the
// first line or in :status is ignored: it is no status, and a customer
// value there (a card number) must not reach http_status.
func httpStatusRange(n int64) bool { return n >= 100 && n <= 999 }
