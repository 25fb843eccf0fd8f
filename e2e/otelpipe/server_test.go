package otelpipe

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The MCP server under test, built with the MCP Go SDK and instrumented as
// the GenAI conventions describe an MCP server span: mcp.method.name,
// gen_ai.tool.name, error.type (the JSON-RPC code as a string, or
// tool_error), rpc.response.status_code, an exception event with the
// error's message, and enduser.id from the request.

type weatherArgs struct {
	City string `json:"city" jsonschema:"the city"`
}

// newWeatherServer returns an MCP server with three tools: get_weather
// (needs a city: without one the SDK answers -32602), book_table (always a
// tool result with isError) and forecast (a handler error).
func newWeatherServer(tracer trace.Tracer) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "weather-mcp", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "get_weather", Description: "the weather in a city"},
		func(ctx context.Context, req *mcp.CallToolRequest, in weatherArgs) (*mcp.CallToolResult, any, error) {
			if in.City == "" {
				return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "city is required"}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + in.City}}}, nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "book_table", Description: "book a table", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no table free tonight"}}}, nil
		})
	s.AddReceivingMiddleware(instrument(tracer))
	return s
}

var propagator = propagation.TraceContext{}

// instrument is the server's OpenTelemetry middleware: one SERVER span per
// request, child of the caller's traceparent.
func instrument(tracer trace.Tracer) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			var hdr http.Header
			if ex := req.GetExtra(); ex != nil {
				hdr = ex.Header
			}
			ctx = propagator.Extract(ctx, propagation.HeaderCarrier(hdr))
			attrs := []attribute.KeyValue{attribute.String("mcp.method.name", method), attribute.String("mcp.protocol.version", "2025-11-25")}
			name := method
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				attrs = append(attrs, attribute.String("gen_ai.tool.name", p.Name))
				name += " " + p.Name
			}
			if u := hdr.Get("X-End-User"); u != "" {
				attrs = append(attrs, attribute.String("enduser.id", u))
			}
			ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
			defer span.End()
			res, err := next(ctx, method, req)
			var werr *jsonrpc.Error
			switch {
			case errors.As(err, &werr):
				code := strconv.FormatInt(werr.Code, 10)
				span.SetAttributes(attribute.String("error.type", code), attribute.String("rpc.response.status_code", code))
				span.RecordError(errors.New(werr.Message))
				span.SetStatus(codes.Error, werr.Message)
			case err != nil:
				span.SetAttributes(attribute.String("error.type", "_OTHER"))
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			default:
				if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
					msg := ""
					if len(r.Content) > 0 {
						if tc, ok := r.Content[0].(*mcp.TextContent); ok {
							msg = tc.Text
						}
					}
					span.SetAttributes(attribute.String("error.type", "tool_error"))
					span.RecordError(errors.New(msg))
					span.SetStatus(codes.Error, msg)
				}
			}
			return res, err
		}
	}
}

// wireReply is one HTTP reply as it left the server.
type wireReply struct {
	status int
	header http.Header
	body   []byte
}

// capture keeps each reply's wire bytes by the trace id of the request's
// traceparent.
type capture struct {
	mu      *sync.Mutex
	replies map[string][]wireReply
	next    http.Handler
}

type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }
func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	c.next.ServeHTTP(rec, r)
	sc := trace.SpanContextFromContext(propagator.Extract(context.Background(), propagation.HeaderCarrier(r.Header)))
	if !sc.IsValid() || r.Method != http.MethodPost {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.replies[sc.TraceID().String()] = append(c.replies[sc.TraceID().String()], wireReply{rec.status, rec.Header().Clone(), bytes.Clone(rec.body.Bytes())})
}

// injecting is the client's transport: it sends the call's trace context
// and the end user, as an instrumented client would.
type injecting struct {
	base http.RoundTripper
	user string
}

func (t injecting) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	propagator.Inject(r.Context(), propagation.HeaderCarrier(r.Header))
	r.Header.Set("X-End-User", t.user)
	return t.base.RoundTrip(r)
}

var _ io.Writer = (*recorder)(nil)
