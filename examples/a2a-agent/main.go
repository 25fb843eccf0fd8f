// Command a2a-agent is a small A2A agent built with a2a-go v2 (JSON-RPC,
// HTTP+JSON and gRPC) whose error replies are published to errtrail by
// emit: emit.Handler around the HTTP bindings, emit's interceptors on the
// gRPC server. A per-caller limiter in front of it rejects as seed 002
// recommends (429 / RESOURCE_EXHAUSTED, Retry-After, ErrorInfo
// RATE_LIMIT_EXCEEDED), so errors are easy to provoke; see README.md.
//
// With --plain nothing is published: the agent is then the "unchanged
// agent" that examples/tap puts cmd/tap in front of.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"

	"github.com/errtrail/errtrail/emit"
	"github.com/errtrail/errtrail/emit/emitgrpc"
	"github.com/errtrail/errtrail/emit/kafkapub"
)

// executor answers by the message's first text: "crash" fails the call,
// "fail" ends the task FAILED, anything else is echoed.
type executor struct{}

func (executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := ""
		if ec.Message != nil {
			for _, p := range ec.Message.Parts {
				if s, ok := p.Content.(a2a.Text); ok {
					text = string(s)
					break
				}
			}
		}
		switch text {
		case "crash":
			yield(nil, errors.New("research index unavailable: connection refused"))
		case "fail":
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed,
				a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("model backend returned HTTP 503"))), nil)
		default:
			yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("you said: "+text)), nil)
		}
	}
}

func (executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func main() {
	listen := flag.String("listen", "127.0.0.1:18080", "JSON-RPC (/jsonrpc) and HTTP+JSON (/) address")
	grpcListen := flag.String("grpc.listen", "127.0.0.1:18081", "gRPC address")
	agent := flag.String("agent", "research-agent", "the agent's name in the events")
	brokers := flag.String("kafka.brokers", envOr("ERRTRAIL_KAFKA_BROKERS", "127.0.0.1:19092"), "Kafka brokers (default $ERRTRAIL_KAFKA_BROKERS)")
	topic := flag.String("kafka.topic", envOr("ERRTRAIL_KAFKA_TOPIC", kafkapub.DefaultTopic), "topic (default $ERRTRAIL_KAFKA_TOPIC)")
	burst := flag.Int("limit.burst", 3, "calls a caller may make at once")
	refill := flag.Duration("limit.refill", 10*time.Second, "then one more call per this")
	plain := flag.Bool("plain", false, "publish nothing (an unchanged agent, for examples/tap)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The agent: one request handler, three bindings, the limiter first.
	lim := newLimiter(*burst, *refill)
	h := a2asrv.NewHandler(executor{}, a2asrv.WithCapabilityChecks(&a2a.AgentCapabilities{Streaming: true}))
	card := &a2a.AgentCard{Name: *agent, Description: "errtrail example agent", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface("http://"+*listen+"/jsonrpc", a2a.TransportProtocolJSONRPC),
			a2a.NewAgentInterface("http://"+*listen, a2a.TransportProtocolHTTPJSON),
			a2a.NewAgentInterface(*grpcListen, a2a.TransportProtocolGRPC)},
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "echo", Description: "echoes; 'crash' and 'fail' fail", Tags: []string{"example"}}}}
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(h))
	mux.Handle("/", a2asrv.NewRESTHandler(h))
	var handler http.Handler = lim.HTTP(mux)
	unary := []grpc.UnaryServerInterceptor{lim.Unary}
	var streams []grpc.StreamServerInterceptor

	// errtrail: one publisher, the middleware outermost, the interceptors first.
	var pub *kafkapub.Publisher
	if !*plain {
		var err error
		pub, err = kafkapub.New(kafkapub.Config{Brokers: strings.Split(*brokers, ","), Topic: *topic, Logger: log})
		if err != nil {
			log.Error("publisher", "err", err)
			os.Exit(1)
		}
		handler = emit.Handler(handler, pub, emit.Config{Agent: *agent, Caller: emit.CallerFromHeader("X-Caller")})
		gcfg := emitgrpc.Config{Agent: *agent, Caller: emitgrpc.CallerFromMetadata("x-caller")}
		unary = append([]grpc.UnaryServerInterceptor{emitgrpc.UnaryServerInterceptor(pub, gcfg)}, unary...)
		streams = append(streams, emitgrpc.StreamServerInterceptor(pub, gcfg))
	}

	hl, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Error("listen", "err", err)
		os.Exit(1)
	}
	gl, err := net.Listen("tcp", *grpcListen)
	if err != nil {
		log.Error("listen", "err", err)
		os.Exit(1)
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(streams...))
	grpcv1.NewHandler(h).RegisterWith(gs)
	go hs.Serve(hl)
	go gs.Serve(gl)
	printHelp(*listen, *grpcListen, *agent, *plain, *brokers, *topic, lim)

	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	gs.GracefulStop()
	if pub != nil {
		if err := pub.Close(sctx); err != nil {
			log.Warn("queued events dropped", "err", err)
		}
	}
}

func printHelp(listen, grpcListen, agent string, plain bool, brokers, topic string, lim *limiter) {
	where := fmt.Sprintf("error replies are published to %s on %s", topic, brokers)
	if plain {
		where = "--plain: nothing is published (put cmd/tap in front, see examples/tap)"
	}
	fmt.Printf(`A2A agent %q: JSON-RPC http://%[2]s/jsonrpc, HTTP+JSON http://%[2]s/, gRPC %[3]s
%[4]s. Limit per caller (X-Caller): %[5]s.

Provoke errors (run the first one 4 times: the 4th is a 429 RATE_LIMIT_EXCEEDED):
  curl -si http://%[2]s/jsonrpc -H 'Content-Type: application/json' -H 'X-Caller: orchestrator-7' \
    -d '{"jsonrpc":"2.0","id":"req-1","method":"SendMessage","params":{"message":{"messageId":"msg-hello-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}'
  curl -si http://%[2]s/message:send -H 'Content-Type: application/json' -H 'X-Caller: planner-2' \
    -H 'X-Request-Id: req-crash-1' -d '{"message":{"messageId":"msg-crash-1","role":"ROLE_USER","parts":[{"text":"crash"}]}}'
  curl -si http://%[2]s/tasks/00000000-0000-4000-8000-00000000dead -H 'X-Caller: planner-3'
Then "go run ./cmd/ingest run" stores them and "go run ./cmd/errtrail lookup req-crash-1" tells one's story.
Ctrl-C stops it (queued events are flushed first).
`, agent, listen, grpcListen, where, lim.policy())
}
