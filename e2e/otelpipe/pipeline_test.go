package otelpipe

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"

	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/otlpin"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/schema"
)

// hashKey is the deployment key of the test: ingest and the reference
// decode of the wire bytes share it, so hashed values compare equal.
var hashKey = []byte("otelpipe-test-key")

// call is one call the test makes (an MCP tool call, or an A2A JSON-RPC
// request) and what its reply must be.
type call struct {
	tool    string         // MCP: the tool; A2A: the name of the case
	args    map[string]any // MCP: the tool's arguments
	a2a     string         // A2A: the JSON-RPC request body
	method  string         // the JSON-RPC method, as an emitter would record it
	agent   string
	taskID  string // A2A: the a2a.task.id / a2a.message.id the span carries,
	msgID   string // which the row must hold
	failed  bool   // the reply is an error: a row must be stored
	traceID string
}

// newTrace returns a context holding a new sampled span context, as the
// caller's instrumentation would start one, and its trace id.
func newTrace(ctx context.Context) (context.Context, string) {
	var tid trace.TraceID
	var sid trace.SpanID
	for j := range tid {
		tid[j] = byte(rand.IntN(256))
	}
	for j := range sid {
		sid[j] = byte(rand.IntN(256))
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	return trace.ContextWithSpanContext(ctx, sc), tid.String()
}

// Fields a record inferred from the MCP span's attributes must share with
// the decode of the reply's wire bytes, and the fields that OTLP (these
// GenAI attributes) cannot carry, which the stored row leaves as the
// attributes give them. The test fails if a field of the first list
// differs, and logs the second.
var (
	carried    = []string{"protocol", "kind", "retryable", "jsonrpc_code", "message", "method", "agent", "caller"}
	notCarried = []string{"envelope", "code", "typed", "retryable_source", "jsonrpc_id", "findings", "http_status", "binding"}
)

// TestRealPipeline: the OTel Go SDK → OTLP/HTTP → the Collector's OTLP
// receiver → the contrib Kafka exporter (otlp_proto and otlp_json) → real
// Kafka → errtrail ingest → ClickHouse. Every failed tool call of the MCP
// server is stored once per encoding, with origin otlp, the call's trace
// id, the source id the exporter put in a Kafka header, and the fields OTLP
// carries equal to what the reply's wire bytes decode to; the successful
// calls and the session's own requests store nothing.
func TestRealPipeline(t *testing.T) {
	brokers := strings.Split(testenv.Kafka(t), ",")
	chAddr := strings.Split(testenv.ClickHouse(t), ",")[0]
	id := fmt.Sprintf("%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1e6))
	protoTopic, jsonTopic := "errtrail.otelpipe.proto."+id, "errtrail.otelpipe.json."+id
	for _, tp := range []string{protoTopic, jsonTopic} {
		createTopic(t, brokers[0], tp)
	}
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{chAddr}, Protocol: clickhouse.Native,
		DialTimeout: testenv.CHDialTimeout, ReadTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// One database per encoding: both hold the same spans (same event
	// ids), which one table would collapse.
	dbs := map[string]schema.Options{protoTopic: {Database: "errtrail_otelpipe_p_" + id}, jsonTopic: {Database: "errtrail_otelpipe_j_" + id}}
	t.Cleanup(func() {
		if os.Getenv("ERRTRAIL_KEEP_TEST_DATA") == "" {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for tp, o := range dbs {
				_ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+o.Database)
				deleteTopic(brokers[0], tp)
			}
		}
		conn.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, o := range dbs {
		if _, err := schema.Migrate(ctx, conn, o); err != nil {
			t.Fatalf("migrate: %v", err)
		}
	}

	// The Collector, the instrumented MCP server, the SDK pipeline.
	col := startCollector(t, brokers, protoTopic, jsonTopic)
	defer col.stop()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(col.endpoint), otlptracehttp.WithInsecure(),
		otlptracehttp.WithHeaders(map[string]string{metadataKey: "mcp-eu-1"}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Hour)),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("weather-mcp"))))
	defer tp.Shutdown(context.Background())
	capt := &capture{replies: map[string][]wireReply{}, mu: &sync.Mutex{}}
	capt.next = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newWeatherServer(tp.Tracer("weather-mcp")) },
		&mcp.StreamableHTTPOptions{JSONResponse: true})
	srv := httptest.NewServer(capt)
	defer srv.Close()

	client := mcp.NewClient(&mcp.Implementation{Name: "orchestrator", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: injecting{base: http.DefaultTransport, user: "orchestrator-7"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := []call{
		{tool: "get_weather", args: map[string]any{}, failed: true},           // the handler's -32602: the SDK answers a tool error
		{tool: "get_weather", args: map[string]any{"city": "Berlin"}},         // success
		{tool: "book_table", args: map[string]any{"party": 4}, failed: true},  // isError result
		{tool: "no_such_tool", args: map[string]any{}, failed: true},          // unknown tool: the SDK's -32602
		{tool: "get_weather", args: map[string]any{"city": 42}, failed: true}, // schema validation
	}
	for i := range calls {
		c := &calls[i]
		c.method, c.agent = "tools/call", "weather-mcp"
		cctx, tid := newTrace(ctx)
		c.traceID = tid
		res, err := session.CallTool(cctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		failed := err != nil || (res != nil && res.IsError)
		if failed != c.failed {
			t.Fatalf("call %d (%s): failed=%v (err %v), want %v", i, c.tool, failed, err, c.failed)
		}
	}
	session.Close()

	// The A2A agent, with a tracer provider of its own.
	aexp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(col.endpoint), otlptracehttp.WithInsecure(),
		otlptracehttp.WithHeaders(map[string]string{metadataKey: "mcp-eu-1"}))
	if err != nil {
		t.Fatal(err)
	}
	atp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(aexp, sdktrace.WithBatchTimeout(time.Hour)),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("research-agent"))))
	defer atp.Shutdown(context.Background())
	acapt := &capture{replies: capt.replies, mu: capt.mu, next: newResearchAgent(atp.Tracer("research-agent"))}
	asrv := httptest.NewServer(acapt)
	defer asrv.Close()
	const missing = "00000000-0000-4000-8000-00000000dead"
	a2aCalls := []call{
		{tool: "task-not-found", method: "GetTask", a2a: `{"jsonrpc":"2.0","id":"r1","method":"GetTask","params":{"id":"` + missing + `"}}`, taskID: missing, failed: true},
		{tool: "executor-failure", method: "SendMessage", a2a: `{"jsonrpc":"2.0","id":"r2","method":"SendMessage","params":{"message":{"messageId":"m-2","role":"ROLE_USER","parts":[{"text":"crash"}]}}}`, msgID: "m-2", failed: true},
		{tool: "unsupported", method: "GetExtendedAgentCard", a2a: `{"jsonrpc":"2.0","id":"r3","method":"GetExtendedAgentCard","params":{}}`, failed: true},
		{tool: "success", method: "SendMessage", a2a: `{"jsonrpc":"2.0","id":"r4","method":"SendMessage","params":{"message":{"messageId":"m-4","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`},
	}
	for i := range a2aCalls {
		c := &a2aCalls[i]
		c.agent = "research-agent"
		cctx, tid := newTrace(ctx)
		c.traceID = tid
		req, _ := http.NewRequestWithContext(cctx, http.MethodPost, asrv.URL, strings.NewReader(c.a2a))
		req.Header.Set("Content-Type", "application/json")
		res, err := (&http.Client{Transport: injecting{base: http.DefaultTransport, user: "orchestrator-7"}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if failed := strings.Contains(string(body), `"error"`); failed != c.failed {
			t.Fatalf("A2A %s: failed=%v, want %v: %s", c.tool, failed, c.failed, body)
		}
	}
	calls = append(calls, a2aCalls...)
	for _, p := range []*sdktrace.TracerProvider{tp, atp} {
		if err := p.ForceFlush(ctx); err != nil {
			t.Fatalf("flush spans: %v", err)
		}
	}

	// errtrail's ingest, one pipeline per encoding.
	var want int
	for _, c := range calls {
		if c.failed {
			want++
		}
	}
	for topic, o := range dbs {
		enc := otlpin.Proto
		if topic == jsonTopic {
			enc = otlpin.JSON
		}
		runIngest(t, ctx, brokers, topic, otlpin.Format{Signal: otlpin.Traces, Encoding: enc}, conn, o, want)
		checkRows(t, ctx, conn, o, calls, capt, string(enc))
	}
}

// runIngest consumes topic into the database of o until want errors rows
// are stored, then stops.
func runIngest(t *testing.T, ctx context.Context, brokers []string, topic string, f otlpin.Format, conn driver.Conn, o schema.Options, want int) {
	t.Helper()
	g, err := ingest.NewGroup(ingest.GroupConfig{Reader: kafka.ReaderConfig{Brokers: brokers, GroupID: "errtrail-otelpipe-" + o.Database,
		Topic: topic, MinBytes: 1, MaxBytes: 8 << 20, MaxWait: 200 * time.Millisecond, StartOffset: kafka.FirstOffset,
		SessionTimeout: 6 * time.Second, HeartbeatInterval: time.Second, RebalanceTimeout: 10 * time.Second, JoinGroupBackoff: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	p, err := ingest.New(ingest.Config{
		Topics: []string{topic}, OTLP: map[string]otlpin.Format{topic: f},
		Table:   o.Database + "." + schema.TableLanding,
		Limits:  ingest.Limits{Rows: 100, Wait: 200 * time.Millisecond},
		Decoder: parse.Options{HashKey: hashKey},
		Progress: func(ctx context.Context, conn driver.Conn, topic string) (map[int32]int64, error) {
			return schema.Progress(ctx, conn, o, topic)
		},
		InsertTimeout: 20 * time.Second,
	}, g, conn)
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(rctx) }()
	for {
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM "+o.Database+".errors").Scan(&n); err == nil && n >= uint64(want) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: waited for %d rows: %v", topic, want, ctx.Err())
		}
		time.Sleep(300 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("ingest: %v", err)
	}
}

// checkRows compares each stored row with the decode of its reply's wire
// bytes.
func checkRows(t *testing.T, ctx context.Context, conn driver.Conn, o schema.Options, calls []call, capt *capture, enc string) {
	t.Helper()
	var n, dead uint64
	if err := conn.QueryRow(ctx, "SELECT count(), uniqExact(event_id) FROM "+o.Database+".errors").Scan(&n, &dead); err != nil {
		t.Fatal(err)
	}
	finder := &lookup.Finder{Conn: conn, Database: o.Database}
	stored := 0
	seen := map[string]bool{} // carried fields with a value in some row: an equality of empties proves nothing
	defer func() {
		for _, f := range carried {
			if !seen[f] {
				t.Errorf("%s: no stored row has a %s: the comparison of that field proved nothing", enc, f)
			}
		}
	}()
	for _, c := range calls {
		st, err := finder.Story(ctx, c.traceID, lookup.FindOptions{})
		if !c.failed {
			if err == nil {
				t.Errorf("%s: the successful call %s was stored: %+v", enc, c.tool, st.Record)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: the failed call %s (trace %s) is not found: %v", enc, c.tool, c.traceID, err)
			continue
		}
		stored++
		got := &st.Record
		if got.Origin != "otlp" || got.TraceID != c.traceID || got.SpanID == "" || got.SourceID != "mcp-eu-1" || st.MatchedAs != "trace_id" {
			t.Errorf("%s %s: origin %q trace %q span %q source_id %q matched %q", enc, c.tool, got.Origin, got.TraceID, got.SpanID, got.SourceID, st.MatchedAs)
		}
		if got.TaskID != c.taskID || got.MessageID != c.msgID {
			t.Errorf("%s %s: task_id %q message_id %q, want %q %q (from a2a.task.id, a2a.message.id)", enc, c.tool, got.TaskID, got.MessageID, c.taskID, c.msgID)
		}
		replies := capt.replies[c.traceID]
		if len(replies) != 1 {
			t.Errorf("%s: %d replies captured for trace %s", c.tool, len(replies), c.traceID)
			continue
		}
		wire := decodeWire(t, replies[0], c, got)
		gotF, wireF := fieldsOf(got), fieldsOfParse(wire)
		for _, f := range carried {
			if gotF[f] != wireF[f] {
				t.Errorf("%s %s: %s stored %q, the wire bytes decode to %q", enc, c.tool, f, gotF[f], wireF[f])
			}
			seen[f] = seen[f] || gotF[f] != ""
		}
		for _, f := range notCarried {
			if gotF[f] != wireF[f] {
				t.Logf("%s %s: %s not carried by OTLP: stored %q, wire %q", enc, c.tool, f, gotF[f], wireF[f])
			}
		}
	}
	if stored == 0 || n != uint64(stored) || dead != n {
		t.Errorf("%s: %d rows with %d event ids for %d failed calls", enc, n, dead, stored)
	}
}

// decodeWire decodes the reply's wire bytes as errtrail decodes a raw
// reply, with the context the stored row has (agent, caller, method), the
// form an emitter next to the server would have published.
func decodeWire(t *testing.T, r wireReply, c call, ctxOf *lookup.Row) *parse.Record {
	t.Helper()
	var hs []parse.Header
	for k, vs := range r.header {
		for _, v := range vs {
			hs = append(hs, parse.Header{Name: k, Value: v})
		}
	}
	d := parse.NewDecoder(parse.Options{HashKey: hashKey})
	rec := parse.Record{Agent: c.agent, Caller: "orchestrator-7", Method: c.method, GRPCCode: -1, RetryAfterMS: -1}
	if err := d.DecodeReply(&parse.Reply{HTTPStatus: r.status, Headers: hs, Body: r.body, GRPCStatus: -1, ObservedAtMS: ctxOf.ObservedAt.UnixMilli()}, &rec); err != nil {
		t.Fatalf("decode the wire bytes %q: %v", r.body, err)
	}
	return rec.Clone()
}

func fieldsOf(r *lookup.Row) map[string]string {
	opt := func(p *int) string {
		if p == nil {
			return ""
		}
		return fmt.Sprint(*p)
	}
	ret := ""
	if r.Retryable != nil {
		ret = fmt.Sprint(*r.Retryable)
	}
	return map[string]string{"protocol": r.Protocol, "kind": r.Kind, "retryable": ret, "jsonrpc_code": opt(r.JSONRPCCode),
		"message": r.Message, "method": r.Method, "agent": r.Agent, "caller": r.Caller, "envelope": r.Envelope, "code": r.Code,
		"typed": fmt.Sprint(r.Typed), "retryable_source": r.RetryableSource, "jsonrpc_id": r.JSONRPCID,
		"findings": strings.Join(r.Findings, ","), "http_status": opt(r.HTTPStatus), "binding": r.Binding}
}

func fieldsOfParse(r *parse.Record) map[string]string {
	jc, hs, ret := "", "", ""
	if r.HasJSONRPC {
		jc = fmt.Sprint(r.JSONRPCCode)
	}
	if r.HTTPStatus > 0 {
		hs = fmt.Sprint(r.HTTPStatus)
	}
	switch r.Retryable {
	case parse.TriTrue:
		ret = "true"
	case parse.TriFalse:
		ret = "false"
	}
	var fs []string
	for _, f := range r.Findings {
		fs = append(fs, string(f))
	}
	return map[string]string{"protocol": string(r.Protocol), "kind": string(r.Kind), "retryable": ret, "jsonrpc_code": jc,
		"message": r.Message, "method": r.Method, "agent": r.Agent, "caller": r.Caller, "envelope": string(r.Envelope), "code": r.Code,
		"typed": fmt.Sprint(r.Typed), "retryable_source": string(r.RetryableSource), "jsonrpc_id": r.JSONRPCID,
		"findings": strings.Join(fs, ","), "http_status": hs, "binding": string(r.Binding)}
}
