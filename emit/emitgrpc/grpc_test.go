package emitgrpc

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/errtrail/errtrail/emit"
	"github.com/errtrail/errtrail/emit/internal/emittest"
	"github.com/errtrail/errtrail/emit/kafkapub"
	"github.com/errtrail/errtrail/internal/stackload"
)

// grpcRateLimiter is the seed-002 limiter as a unary interceptor: a caller
// named in x-caller as over its limit gets RESOURCE_EXHAUSTED with
// ErrorInfo RATE_LIMIT_EXCEEDED, RetryInfo 12s and a QuotaFailure, decided
// at admission (the handler never runs).
func grpcRateLimiter(over string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		if vs := md.Get("x-caller"); len(vs) > 0 && vs[0] == over {
			st := status.New(codes.ResourceExhausted, "Caller "+over+" exceeded 60 SendMessage calls per minute")
			st, err := st.WithDetails(
				&errdetails.ErrorInfo{Reason: "RATE_LIMIT_EXCEEDED", Domain: "agents.example.com",
					Metadata: map[string]string{"policy": "per-caller", "scope": "caller", "method": emit.GRPCMethod(info.FullMethod)}},
				&errdetails.RetryInfo{RetryDelay: durationpb.New(12 * time.Second)},
				&errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{Subject: "caller:" + over, Description: "60 requests per 60 s"}}},
			)
			if err != nil {
				return nil, err
			}
			return nil, st.Err()
		}
		return handler(ctx, req)
	}
}

// a2aGRPCServer serves a real a2a-go v2 A2AService (the agentExec of
// servers_test.go) with the emitter outermost and the rate limiter between
// it and the handler.
func a2aGRPCServer(t *testing.T, sink emit.Sink, cfg Config) string {
	h := a2asrv.NewHandler(emittest.AgentExec{}, a2asrv.WithCapabilityChecks(&a2a.AgentCapabilities{Streaming: true}))
	gs := grpc.NewServer(
		grpc.ChainUnaryInterceptor(UnaryServerInterceptor(sink, cfg), grpcRateLimiter("orchestrator-7")),
		grpc.ChainStreamInterceptor(StreamServerInterceptor(sink, cfg)),
	)
	grpcv1.NewHandler(h).RegisterWith(gs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	return ln.Addr().String()
}

// grpcCall is one provoked call and what the client received.
type grpcCall struct {
	name     string
	md       []string
	do       func(ctx context.Context, c pb.A2AServiceClient, hdr, tr *metadata.MD) error
	method   string
	code     string // parse.Record.Code or Reason, "" for any
	msgID    string
	taskID   string
	attempt  int
	caller   string
	wantFail bool
}

func pbMsg(id, text string) *pb.SendMessageRequest {
	return &pb.SendMessageRequest{Message: &pb.Message{MessageId: id, Role: pb.Role_ROLE_USER,
		Parts: []*pb.Part{{Content: &pb.Part_Text{Text: text}}}}}
}

var grpcCalls = []grpcCall{
	{name: "grpc-task-not-found", method: "GetTask", code: "TASK_NOT_FOUND", taskID: missingTask, wantFail: true,
		do: func(ctx context.Context, c pb.A2AServiceClient, h, tr *metadata.MD) error {
			_, err := c.GetTask(ctx, &pb.GetTaskRequest{Id: missingTask}, grpc.Header(h), grpc.Trailer(tr))
			return err
		}},
	{name: "grpc-unsupported-operation", method: "GetExtendedAgentCard", code: "UNSUPPORTED_OPERATION", wantFail: true,
		do: func(ctx context.Context, c pb.A2AServiceClient, h, tr *metadata.MD) error {
			_, err := c.GetExtendedAgentCard(ctx, &pb.GetExtendedAgentCardRequest{}, grpc.Header(h), grpc.Trailer(tr))
			return err
		}},
	{name: "grpc-executor-failure", method: "SendMessage", msgID: "m-g3", wantFail: true,
		do: func(ctx context.Context, c pb.A2AServiceClient, h, tr *metadata.MD) error {
			_, err := c.SendMessage(ctx, pbMsg("m-g3", "crash"), grpc.Header(h), grpc.Trailer(tr))
			return err
		}},
	{name: "grpc-rate-limited", method: "SendMessage", code: "RATE_LIMIT_EXCEEDED", msgID: "m-g4", attempt: 2, caller: "orchestrator-7", wantFail: true,
		md: []string{"x-caller", "orchestrator-7", "x-attempt", "2", "idempotency-key", "lead-7781"},
		do: func(ctx context.Context, c pb.A2AServiceClient, h, tr *metadata.MD) error {
			_, err := c.SendMessage(ctx, pbMsg("m-g4", "hi"), grpc.Header(h), grpc.Trailer(tr))
			return err
		}},
	{name: "grpc-stream-executor-failure", method: "SendStreamingMessage", msgID: "m-g5", wantFail: true,
		do: func(ctx context.Context, c pb.A2AServiceClient, h, tr *metadata.MD) error {
			s, err := c.SendStreamingMessage(ctx, pbMsg("m-g5", "crash"))
			if err != nil {
				return err
			}
			for {
				if _, err = s.Recv(); err != nil {
					break
				}
			}
			*h, _ = s.Header()
			*tr = s.Trailer()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}},
	{name: "grpc-success", method: "SendMessage",
		do: func(ctx context.Context, c pb.A2AServiceClient, h, tr *metadata.MD) error {
			_, err := c.SendMessage(ctx, pbMsg("m-g6", "hello"), grpc.Header(h), grpc.Trailer(tr))
			return err
		}},
}

// grpcText writes what the client received in the contract's gRPC text
// form: the status and message from the client's status, the trailers it
// received (-bin values base64, padded: the decoder takes both forms).
func grpcText(err error, tr metadata.MD) []byte {
	st := status.Convert(err)
	var b strings.Builder
	b.WriteString("GRPC 200\ncontent-type: application/grpc\n")
	fmt.Fprintf(&b, "grpc-status: %d\n", st.Code())
	if st.Message() != "" {
		fmt.Fprintf(&b, "grpc-message: %s\n", emittest.PctEncode(st.Message()))
	}
	keys := make([]string, 0, len(tr))
	for k := range tr {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range tr[k] {
			if strings.HasSuffix(k, "-bin") {
				v = base64.StdEncoding.EncodeToString([]byte(v))
			}
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	return []byte(b.String())
}

// TestGRPCRealServerThroughKafka runs a real a2a-go v2 gRPC agent wrapped
// by the server interceptors and calls it through a client wrapped by the
// client interceptors; each failing call publishes one agent event and one
// client event. Read back from the stack's Kafka, each event is valid under
// the schema, carries no credential, and decodes (as ingest decodes) to the
// same record, field by field, as the reply the client received written in
// the gRPC text form; method, ids, caller and attempt are the call's. The
// success publishes nothing.
func TestGRPCRealServerThroughKafka(t *testing.T) {
	brokers, topic := emittest.KafkaTopic(t)
	pub, err := kafkapub.New(kafkapub.Config{Brokers: brokers, Topic: topic, Linger: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	caller := CallerFromMetadata("x-caller")
	addr := a2aGRPCServer(t, pub, Config{Agent: "research-agent", Source: emit.Source{ID: "agent-eu-1"}, Caller: caller})
	ccfg := Config{Agent: "research-agent", Source: emit.Source{ID: "client-1"}, Caller: caller}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(UnaryClientInterceptor(pub, ccfg)),
		grpc.WithChainStreamInterceptor(StreamClientInterceptor(pub, ccfg)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewA2AServiceClient(conn)

	wires := map[string][]byte{}
	want := map[string]grpcCall{}
	n := 0
	for _, cl := range grpcCalls {
		md := append([]string{"x-request-id", cl.name, "authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"}, cl.md...)
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), md...), 10*time.Second)
		var hdr, tr metadata.MD
		err := cl.do(ctx, client, &hdr, &tr)
		cancel()
		if (err != nil) != cl.wantFail {
			t.Fatalf("%s: error %v; want failure %v", cl.name, err, cl.wantFail)
		}
		if err != nil {
			wires[cl.name] = grpcText(err, tr)
			n += 2
		}
		want[cl.name] = cl
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pub.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	evs := emittest.ReadEvents(t, brokers, topic, n)
	seen := map[string]bool{}
	var stored []stackload.StoredCase
	for _, ev := range evs {
		emittest.ValidEvent(t, ev)
		if strings.Contains(string(ev), "eyJhbGciOiJIUzI1NiJ9") || strings.Contains(string(ev), "lead-7781\"]") {
			t.Errorf("credential in event %s", ev)
		}
		ec := emittest.ParseEventContext(t, ev)
		name := ec.Request.HTTPRequestID
		key := name + "/" + ec.Source.Kind
		cl, ok := want[name]
		if !ok || !cl.wantFail || seen[key] {
			t.Errorf("unexpected event %s", ev)
			continue
		}
		seen[key] = true
		rec := emittest.SameRecord(t, key, ev, wires[name], "")
		stored = append(stored, stackload.StoredCase{Name: key, EventID: ec.EventID, Wire: rec})
		if cl.code != "" && rec.Code != cl.code && rec.Reason != cl.code {
			t.Errorf("%s: code %q reason %q; want %s", key, rec.Code, rec.Reason, cl.code)
		}
		if rec.Method != cl.method || rec.Agent != "research-agent" || rec.MessageID != cl.msgID || rec.TaskID != cl.taskID ||
			rec.Attempt != max(cl.attempt, 0) || rec.Caller != cl.caller {
			t.Errorf("%s: method %q agent %q message %q task %q attempt %d caller %q; want %q %q %q %d %q", key,
				rec.Method, rec.Agent, rec.MessageID, rec.TaskID, rec.Attempt, rec.Caller, cl.method, cl.msgID, cl.taskID, cl.attempt, cl.caller)
		}
		if rec.Endpoint != "grpc://"+addr {
			t.Errorf("%s: endpoint %q", key, rec.Endpoint)
		}
		if cl.name == "grpc-rate-limited" && (rec.RetryAfterMS != 12000 || rec.IdempotencyHash == 0) {
			t.Errorf("%s: retry after %d ms, idempotency hash %x; want 12000 ms and a hash", key, rec.RetryAfterMS, rec.IdempotencyHash)
		}
		t.Logf("%s: kind %s code %s reason %s grpc %d retry %d", key, rec.Kind, rec.Code, rec.Reason, rec.GRPCCode, rec.RetryAfterMS)
	}
	if len(seen) != n {
		t.Errorf("%d of %d events: %v", len(seen), n, seen)
	}
	stackload.CheckStored(t, topic, len(evs), stored)
}

// TestGRPCSuccessAllocs: a unary call that ends OK costs the interceptors
// no allocation, server or client side.
func TestGRPCSuccessAllocs(t *testing.T) {
	srv := UnaryServerInterceptor(nopSink{}, Config{Agent: "a"})
	cli := UnaryClientInterceptor(nopSink{}, Config{Agent: "a"})
	ctx := context.Background()
	info := &grpc.UnaryServerInfo{FullMethod: "/lf.a2a.v1.A2AService/GetTask"}
	req := &pb.GetTaskRequest{Id: "t-1"}
	ok := func(ctx context.Context, req any) (any, error) { return req, nil }
	inv := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
		return nil
	}
	if n := testing.AllocsPerRun(1000, func() { srv(ctx, req, info, ok) }); n != 0 {
		t.Errorf("server: %v allocations per successful call; want 0", n)
	}
	if n := testing.AllocsPerRun(1000, func() { cli(ctx, info.FullMethod, req, nil, nil, inv) }); n != 0 {
		t.Errorf("client: %v allocations per successful call; want 0", n)
	}
}

// BenchmarkGRPCInterceptors: a successful unary call with no interceptor
// ("base") and through each interceptor, and a failing one. Opt-in:
//
//	go test ./emit -run '^$' -bench emit.GRPC -benchmem
func BenchmarkGRPCInterceptors(b *testing.B) {
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-request-id", "r-1", ":authority", "agent:443"))
	info := &grpc.UnaryServerInfo{FullMethod: "/lf.a2a.v1.A2AService/GetTask"}
	req := &pb.GetTaskRequest{Id: "t-1"}
	ok := func(ctx context.Context, req any) (any, error) { return req, nil }
	fail := func(ctx context.Context, req any) (any, error) {
		return nil, status.Error(codes.NotFound, "task not found")
	}
	srv := UnaryServerInterceptor(nopSink{}, Config{Agent: "a"})
	cli := UnaryClientInterceptor(nopSink{}, Config{Agent: "a"})
	inv := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
		return nil
	}
	b.Run("success/base", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ok(ctx, req)
		}
	})
	b.Run("success/server", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			srv(ctx, req, info, ok)
		}
	})
	b.Run("success/client", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			cli(ctx, info.FullMethod, req, nil, nil, inv)
		}
	})
	b.Run("error/server", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			srv(ctx, req, info, fail)
		}
	})
}

const missingTask = "00000000-0000-4000-8000-00000000dead"

// nopSink marshals each event and keeps nothing.
type nopSink struct{}

func (nopSink) Publish(ev *emit.Event) bool {
	b, _ := ev.AppendJSON(make([]byte, 0, 1024))
	_ = b
	return true
}
