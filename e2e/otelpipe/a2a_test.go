package otelpipe

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"strconv"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The A2A agent under test: a real a2a-go server (JSON-RPC binding) whose
// calls are instrumented with an a2asrv.CallInterceptor as the GenAI
// conventions describe an A2A server span: a2a.method.name, a2a.task.id,
// a2a.message.id, gen_ai.agent.name, rpc.system.name jsonrpc, and on
// failure error.type and rpc.response.status_code (the JSON-RPC code the
// A2A specification gives the error), an exception event and ERROR status.

// researchExec fails a message whose text is "crash"; any other gets an
// answer.
type researchExec struct{}

func (researchExec) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		for _, p := range ec.Message.Parts {
			if s, ok := p.Content.(a2a.Text); ok && s == "crash" {
				yield(nil, errors.New("database connection refused"))
				return
			}
		}
		yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("ok")), nil)
	}
}

func (researchExec) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// a2aCodes is the JSON-RPC code of each A2A error (the A2A specification's
// table), as an instrumentation maps them.
var a2aCodes = []struct {
	err  error
	code int
}{
	{a2a.ErrParseError, -32700}, {a2a.ErrInvalidRequest, -32600}, {a2a.ErrMethodNotFound, -32601},
	{a2a.ErrInvalidParams, -32602}, {a2a.ErrInternalError, -32603}, {a2a.ErrTaskNotFound, -32001},
	{a2a.ErrTaskNotCancelable, -32002}, {a2a.ErrPushNotificationNotSupported, -32003},
	{a2a.ErrUnsupportedOperation, -32004}, {a2a.ErrUnsupportedContentType, -32005},
	{a2a.ErrInvalidAgentResponse, -32006}, {a2a.ErrExtendedCardNotConfigured, -32007},
}

func a2aCode(err error) int {
	for _, c := range a2aCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return -32603
}

// a2aTracing is the instrumentation.
type a2aTracing struct {
	tracer trace.Tracer
	agent  string
}

func (a a2aTracing) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	attrs := []attribute.KeyValue{attribute.String("a2a.method.name", cc.Method()), attribute.String("gen_ai.agent.name", a.agent),
		attribute.String("rpc.system.name", "jsonrpc")}
	switch p := req.Payload.(type) {
	case *a2a.GetTaskRequest:
		attrs = append(attrs, attribute.String("a2a.task.id", string(p.ID)))
	case *a2a.SendMessageRequest:
		if p.Message != nil {
			attrs = append(attrs, attribute.String("a2a.message.id", p.Message.ID))
		}
	}
	if u, ok := ctx.Value(endUserKey{}).(string); ok && u != "" {
		attrs = append(attrs, attribute.String("enduser.id", u))
	}
	ctx, _ = a.tracer.Start(ctx, cc.Method(), trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return ctx, nil, nil
}

func (a a2aTracing) After(ctx context.Context, cc *a2asrv.CallContext, resp *a2asrv.Response) error {
	span := trace.SpanFromContext(ctx)
	defer span.End()
	if resp.Err != nil {
		code := strconv.Itoa(a2aCode(resp.Err))
		span.SetAttributes(attribute.String("error.type", code), attribute.String("rpc.response.status_code", code))
		span.RecordError(resp.Err)
		span.SetStatus(codes.Error, resp.Err.Error())
	}
	return nil
}

type endUserKey struct{}

// withTraceContext is the HTTP server instrumentation's part: the
// request's traceparent and end user in the context the handler sees.
func withTraceContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx = context.WithValue(ctx, endUserKey{}, r.Header.Get("X-End-User"))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// newResearchAgent is the agent's HTTP handler (JSON-RPC at /).
func newResearchAgent(tracer trace.Tracer) http.Handler {
	h := a2asrv.NewHandler(researchExec{}, a2asrv.WithCallInterceptors(a2aTracing{tracer: tracer, agent: "research-agent"}))
	return withTraceContext(a2asrv.NewJSONRPCHandler(h))
}
