package parse

import (
	"bytes"
)

// scratch is the Decoder's reusable memory. Everything a Record borrows
// lives here or in the input.
type scratch struct {
	ar       arena
	raw      []byte // redacted, capped body for RawBody
	body     []byte // de-chunked or base64-decoded body
	bin      []byte // decoded grpc-status-details-bin
	tmp      []byte // redaction output before it is saved
	tapes    [4]tape
	ntape    int
	sse      []byte
	sseBest  []byte
	hdrs     []Header
	trailers []Header
	rep      Reply
	f        facts
	hdr      hdrInfo // what the headers say, when framing read them already
	hdrRead  bool

	echoed      bool   // redaction replaced something
	stack       bool   // a text holds a stack trace (looksStackTrace)
	mcpURI      bool   // JSON-RPC data named a resource uri (MCP resource not found)
	bodyStatus  int    // HTTP status stated inside the body (Status code, problem status)
	bodyJSON    jval   // the reply body when the event embedded it as JSON
	problemType string // A2A problem type slug
	// statusTopLevel: the body is a google.rpc.Status whose members sit at
	// the top level instead of under "error" (seed 003's wrapper rule).
	statusTopLevel bool
}

func (s *scratch) reset() {
	s.ar.reset()
	s.ntape = 0
	s.raw = s.raw[:0]
	s.body = s.body[:0]
	s.bin = s.bin[:0]
	s.hdrs = s.hdrs[:0]
	s.trailers = s.trailers[:0]
	s.rep = Reply{GRPCStatus: -1}
	s.hdrRead = false
	s.echoed, s.stack, s.mcpURI, s.bodyStatus, s.problemType, s.statusTopLevel = false, false, false, 0, "", false
	s.bodyJSON = jval{}
}

func (d *Decoder) decodeMessage(value []byte, headers []MsgHeader, kafkaTimeMS int64, out *Record) error {
	out.reset()
	d.sc.reset()
	if len(value) == 0 {
		return errAt(ErrEmpty, "message", -1, "empty message value")
	}
	if len(value) > d.opt.MaxBytes {
		return errAt(ErrTooLarge, "message", d.opt.MaxBytes, "message larger than the limit")
	}
	rep := &d.sc.rep
	rep.ObservedAtMS = kafkaTimeMS
	var err *DecodeError
	switch {
	case value[0] == '{' || isWS(value[0]):
		out.Origin = OriginEvent
		err = d.event(value, rep, out)
	case len(value) >= 7 && string(value[:7]) == "HTTP/1.": // a constant compare, no call
		out.Origin = OriginRaw
		d.contextFromHeaders(headers, rep, out)
		err = d.rawHTTP(value, rep)
	case bytes.HasPrefix(value, []byte("GRPC")):
		out.Origin = OriginRaw
		d.contextFromHeaders(headers, rep, out)
		err = d.grpcText(value, rep)
	default:
		return errAt(ErrBadEvent, "message", 0, "message is neither event JSON, an HTTP/1.1 response nor a gRPC reply")
	}
	if err != nil {
		return err
	}
	out.ObservedAtMS = rep.ObservedAtMS
	if err := d.decodeReplyInto(rep, out); err != nil {
		return err
	}
	return nil
}

func (d *Decoder) decodeReply(rep *Reply, out *Record) error {
	ctx := *out
	out.reset()
	d.sc.reset()
	copyContext(out, &ctx)
	if len(rep.Body) > d.opt.MaxBytes {
		return errAt(ErrTooLarge, "reply.body", d.opt.MaxBytes, "reply larger than the limit")
	}
	if err := d.decodeReplyInto(rep, out); err != nil {
		return err
	}
	return nil
}

func copyContext(dst, src *Record) {
	dst.EventID, dst.ObservedAtMS, dst.SourceKind, dst.SourceID = src.EventID, src.ObservedAtMS, src.SourceKind, src.SourceID
	dst.SourceVersion = src.SourceVersion
	dst.Agent, dst.Endpoint, dst.Caller, dst.Method, dst.Attempt = src.Agent, src.Endpoint, src.Caller, src.Method, src.Attempt
	dst.HTTPRequestID, dst.JSONRPCID, dst.MessageID, dst.TaskID, dst.IdempotencyKey, dst.IdempotencyHash =
		src.HTTPRequestID, src.JSONRPCID, src.MessageID, src.TaskID, src.IdempotencyKey, src.IdempotencyHash
	dst.TraceID, dst.SpanID, dst.Origin = src.TraceID, src.SpanID, src.Origin
	dst.Inferred = append(dst.Inferred[:0], src.Inferred...)
}

// --- event JSON ---
