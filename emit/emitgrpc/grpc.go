// Package emitgrpc publishes the error replies of gRPC servers and clients
// to errtrail: interceptors, unary and stream, for a server (source kind
// agent) and a client (kind client, or gateway when configured), to an
// emit.Sink such as kafkapub's Publisher. It is apart from emit so that an
// HTTP agent does not link grpc-go.
package emitgrpc

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/errtrail/errtrail/emit"
	"github.com/errtrail/errtrail/internal/keep"
)

// This file holds the gRPC interceptors: unary and stream, server (source
// kind agent) and client (kind client, or gateway when configured). Each
// publishes one event for a call that ends with a non-OK status, with
// reply.grpc {status, message (percent-encoded as on the wire), trailers
// (grpc-status-details-bin base64 as sent)}. A call that ends OK costs no
// allocation in the unary interceptors; a stream costs one (the stream
// wrapper that sees the first request message and, on the client, the
// error). Metadata, ids and the event are read and built only for an error.

// Config says how the gRPC interceptors fill an event. Zero values take
// the defaults.
type Config struct {
	// Source of the events. Kind defaults to emit.KindAgent for the server
	// interceptors and emit.KindClient for the client ones (set emit.KindGateway for
	// a gateway); ID to the host name.
	Source emit.Source
	// Agent names the agent that answered.
	Agent string
	// Endpoint is the service the request was sent to; by default
	// grpc://host:port from the request's :authority (server) or the
	// ClientConn's target without its resolver scheme (client). The method
	// is not part of it (the event's method says it; the endpoint rule would
	// take a dotted service name for a value). Cleaned (emit.CleanEndpoint).
	Endpoint string
	// Caller says who sent the request, from the request's metadata (the
	// incoming metadata on a server, the outgoing one on a client) or its
	// context: CallerFromMetadata("x-caller"), CallerFromPeer, or an
	// auth subject. Never a token: the value is published as it is.
	Caller func(ctx context.Context, md metadata.MD) string
	// Method turns the gRPC full method into the event's method; emit.GRPCMethod
	// by default.
	Method func(fullMethod string) string
	// RequestIDs reads the A2A message and task ids from a request message
	// (the unary request, a stream's first message); A2AProtoIDs by
	// default. It runs only for a call that failed.
	RequestIDs func(req any) (messageID, taskID string)

	RequestIDHeader   string // "x-request-id"
	AttemptHeader     string // "x-attempt": 1 for the first try; else grpc-previous-rpc-attempts + 1
	IdempotencyHeader string // "idempotency-key"
}

func (c *Config) defaults(kind string) {
	if c.Source.Kind == "" {
		c.Source.Kind = kind
	}
	if c.Method == nil {
		c.Method = emit.GRPCMethod
	}
	if c.RequestIDs == nil {
		c.RequestIDs = A2AProtoIDs
	}
	c.RequestIDHeader = strings.ToLower(orDefault(c.RequestIDHeader, "x-request-id"))
	c.AttemptHeader = strings.ToLower(orDefault(c.AttemptHeader, "x-attempt"))
	c.IdempotencyHeader = strings.ToLower(orDefault(c.IdempotencyHeader, "idempotency-key"))
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// A2AProtoIDs reads the A2A ids of an A2A v1 request message by field
// name, so it needs no generated types: message.message_id and
// message.task_id (SendMessage, SendStreamingMessage), id (GetTask,
// CancelTask, SubscribeToTask) or task_id (push configs) for the task.
// Anything that is not a proto message gives empty ids.
func A2AProtoIDs(req any) (messageID, taskID string) {
	pm, ok := req.(proto.Message)
	if !ok || pm == nil {
		return "", ""
	}
	m := pm.ProtoReflect()
	if !m.IsValid() {
		return "", ""
	}
	if f := m.Descriptor().Fields().ByName("message"); f != nil && f.Message() != nil && m.Has(f) {
		sub := m.Get(f).Message()
		messageID = strField(sub, "message_id")
		taskID = strField(sub, "task_id")
	}
	if taskID == "" {
		taskID = strField(m, "task_id")
	}
	if taskID == "" && strings.HasSuffix(string(m.Descriptor().Name()), "TaskRequest") {
		taskID = strField(m, "id")
	}
	return messageID, taskID
}

func strField(m protoreflect.Message, name protoreflect.Name) string {
	f := m.Descriptor().Fields().ByName(name)
	if f == nil || f.Kind() != protoreflect.StringKind || f.IsList() {
		return ""
	}
	return m.Get(f).String()
}

// CallerFromMetadata returns a Caller that reads a metadata key. A key
// that carries credentials (authorization, x-api-key, …) is never read.
func CallerFromMetadata(key string) func(context.Context, metadata.MD) string {
	key = strings.ToLower(key)
	if keep.SensitiveHeader(key) {
		return func(context.Context, metadata.MD) string { return "" }
	}
	return func(_ context.Context, md metadata.MD) string { return first(md, key) }
}

// CallerFromPeer is a Caller that takes the common name of the
// verified mTLS client certificate of the call's peer (empty without one).
func CallerFromPeer(ctx context.Context, _ metadata.MD) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.AuthInfo == nil {
		return ""
	}
	ti, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(ti.State.PeerCertificates) == 0 {
		return ""
	}
	return ti.State.PeerCertificates[0].Subject.CommonName
}

func first(md metadata.MD, key string) string {
	if vs := md[key]; len(vs) > 0 {
		return strings.TrimSpace(vs[0])
	}
	return ""
}

// grpcEmitter builds and publishes the events of one interceptor.
type grpcEmitter struct {
	cfg Config
	obs *emit.Observer
}

func newGRPCEmitter(sink emit.Sink, cfg Config, kind string) *grpcEmitter {
	cfg.defaults(kind)
	o := emit.NewObserver(sink, cfg.Source)
	o.IdempotencyHeader = cfg.IdempotencyHeader
	return &grpcEmitter{cfg: cfg, obs: o}
}

// UnaryServerInterceptor publishes an event (source kind agent) for every
// unary call whose handler returns a non-OK status. Put it first in the
// chain so it sees what later interceptors (auth, rate limits) answer.
func UnaryServerInterceptor(sink emit.Sink, cfg Config) grpc.UnaryServerInterceptor {
	e := newGRPCEmitter(sink, cfg, emit.KindAgent)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		if err != nil {
			e.server(ctx, info.FullMethod, req, err)
		}
		return resp, err
	}
}

// StreamServerInterceptor publishes an event (source kind agent) for every
// stream whose handler returns a non-OK status.
func StreamServerInterceptor(sink emit.Sink, cfg Config) grpc.StreamServerInterceptor {
	e := newGRPCEmitter(sink, cfg, emit.KindAgent)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		w := &serverStream{ServerStream: ss}
		err := handler(srv, w)
		if err != nil {
			e.server(ss.Context(), info.FullMethod, w.first, err)
		}
		return err
	}
}

// serverStream remembers the first message the handler received, for its
// ids.
type serverStream struct {
	grpc.ServerStream
	first any
}

func (s *serverStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if err == nil && s.first == nil {
		s.first = m
	}
	return err
}

// server publishes the status the server is about to send for err, as
// grpc-go derives it: a status error as it is, a context error as
// CANCELLED or DEADLINE_EXCEEDED, anything else as UNKNOWN.
func (e *grpcEmitter) server(ctx context.Context, fullMethod string, req any, err error) {
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err)
	}
	if st.Code() == 0 {
		return
	}
	md, _ := metadata.FromIncomingContext(ctx)
	base := e.cfg.Endpoint
	if base == "" {
		base = grpcEndpoint(first(md, ":authority"))
	}
	var trailers []emit.Header
	if p := st.Proto(); len(p.GetDetails()) > 0 {
		if b, err := proto.Marshal(p); err == nil {
			trailers = append(trailers, emit.Header{Name: "grpc-status-details-bin", Value: base64.RawStdEncoding.EncodeToString(b)})
		}
	}
	e.publish(ctx, md, base, fullMethod, req, st, trailers)
}

// UnaryClientInterceptor publishes an event (source kind client, or as
// configured) for every unary call that ends with a non-OK status. The
// trailers are those of a grpc.Trailer call option the caller passed;
// without one, grpc-status-details-bin is the received status marshaled
// again (grpc-go keeps the details it received, so this is the same
// google.rpc.Status; a mismatched or unparseable details-bin, which grpc-go
// reports as INTERNAL, is then not published as sent).
func UnaryClientInterceptor(sink emit.Sink, cfg Config) grpc.UnaryClientInterceptor {
	e := newGRPCEmitter(sink, cfg, emit.KindClient)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err != nil {
			var tr metadata.MD
			for _, o := range opts {
				if t, ok := o.(grpc.TrailerCallOption); ok && t.TrailerAddr != nil {
					tr = *t.TrailerAddr
				}
			}
			e.client(ctx, cc, method, req, err, tr)
		}
		return err
	}
}

// StreamClientInterceptor publishes an event (source kind client, or as
// configured) for every stream that ends with a non-OK status (the error
// of RecvMsg, or of opening the stream), with the stream's trailers.
func StreamClientInterceptor(sink emit.Sink, cfg Config) grpc.StreamClientInterceptor {
	e := newGRPCEmitter(sink, cfg, emit.KindClient)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		cs, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil {
			e.client(ctx, cc, method, nil, err, nil)
			return cs, err
		}
		return &clientStream{ClientStream: cs, e: e, ctx: ctx, cc: cc, method: method}, nil
	}
}

type clientStream struct {
	grpc.ClientStream
	e        *grpcEmitter
	ctx      context.Context
	cc       *grpc.ClientConn
	method   string
	first    any
	reported bool
}

func (s *clientStream) SendMsg(m any) error {
	if s.first == nil {
		s.first = m
	}
	return s.ClientStream.SendMsg(m)
}

func (s *clientStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil && !errors.Is(err, io.EOF) && !s.reported {
		s.reported = true
		s.e.client(s.ctx, s.cc, s.method, s.first, err, s.ClientStream.Trailer())
	}
	return err
}

func (e *grpcEmitter) client(ctx context.Context, cc *grpc.ClientConn, fullMethod string, req any, err error, tr metadata.MD) {
	st := status.Convert(err)
	if st.Code() == 0 {
		return
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	base := e.cfg.Endpoint
	if base == "" && cc != nil {
		base = grpcEndpoint(cc.Target())
	}
	trailers := Trailers(nil, tr)
	if len(tr["grpc-status-details-bin"]) == 0 {
		if p := st.Proto(); len(p.GetDetails()) > 0 {
			if b, err := proto.Marshal(p); err == nil {
				trailers = append(trailers, emit.Header{Name: "grpc-status-details-bin", Value: base64.RawStdEncoding.EncodeToString(b)})
			}
		}
	}
	e.publish(ctx, md, base, fullMethod, req, st, trailers)
}

// Trailers appends trailer metadata to dst as wire fields, sorted by
// name: -bin values base64 (unpadded, as grpc-go sends them), several
// values of one key joined with ",". grpc-status and grpc-message are left
// out (they are GRPC.Status and GRPC.Message); credentials are dropped by
// Observer.Publish.
func Trailers(dst []emit.Header, md metadata.MD) []emit.Header {
	start := len(dst)
	for k, vs := range md {
		if len(vs) == 0 || k == "grpc-status" || k == "grpc-message" {
			continue
		}
		var v string
		if strings.HasSuffix(k, "-bin") {
			parts := make([]string, len(vs))
			for i, x := range vs {
				parts[i] = base64.RawStdEncoding.EncodeToString([]byte(x))
			}
			v = strings.Join(parts, ",")
		} else {
			v = strings.Join(vs, ",")
		}
		dst = append(dst, emit.Header{Name: k, Value: v})
	}
	slices.SortStableFunc(dst[start:], func(a, b emit.Header) int { return strings.Compare(a.Name, b.Name) })
	return dst
}

// grpcEndpoint turns an authority or a dial target (dns:///host:port,
// passthrough:///host:port, host:port) into grpc://host:port; "" stays "".
func grpcEndpoint(target string) string {
	if i := strings.Index(target, ":///"); i >= 0 {
		target = target[i+4:]
	} else if i := strings.Index(target, "://"); i >= 0 {
		target = target[i+3:]
	}
	if target == "" {
		return ""
	}
	return "grpc://" + target
}

func (e *grpcEmitter) publish(ctx context.Context, md metadata.MD, base, fullMethod string, req any, st *status.Status, trailers []emit.Header) {
	c := &e.cfg
	ev := emit.Event{
		Agent:    c.Agent,
		Endpoint: base,
		Method:   c.Method(fullMethod),
		Reply: emit.Reply{
			Binding:    emit.BindingGRPC,
			HTTPStatus: 200, // the HTTP/2 :status of every gRPC reply
			GRPC:       &emit.GRPC{Status: int(st.Code()), Message: emit.GRPCEncodeMessage(st.Message()), Trailers: trailers},
		},
	}
	if st.Code() > 16 {
		ev.Reply.GRPC.Status = 2 // UNKNOWN, as grpc-go reports an out-of-range code
	}
	if c.Caller != nil {
		ev.Caller = c.Caller(ctx, md)
	}
	ev.Request.HTTPRequestID = first(md, c.RequestIDHeader)
	ev.Request.IdempotencyKey = first(md, c.IdempotencyHeader)
	ev.Request.TraceID, ev.Request.SpanID, _ = emit.ParseTraceparent(first(md, "traceparent"))
	if n, err := strconv.Atoi(first(md, c.AttemptHeader)); err == nil && n > 0 {
		ev.Attempt = n
	} else if n, err := strconv.Atoi(first(md, "grpc-previous-rpc-attempts")); err == nil && n >= 0 {
		ev.Attempt = n + 1
	}
	if req != nil {
		ev.Request.MessageID, ev.Request.TaskID = c.RequestIDs(req)
	}
	e.obs.Publish(&ev)
}
