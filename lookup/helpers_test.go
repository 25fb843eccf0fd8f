package lookup

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/redact"
	"github.com/errtrail/errtrail/schema"
)

// testKey is the deployment key of the tests' rows and Finders.
var testKey = []byte("lookup-test-deployment-key")

var dbSeq atomic.Int64

// openDB connects to the stack's ClickHouse (internal/testenv: skipped
// outside CI, failed in CI when missing) and migrates a fresh database with
// the production schema (schema.Migrate), dropped when the test ends.
func openDB(tb testing.TB) (driver.Conn, schema.Options) {
	tb.Helper()
	addr := testenv.ClickHouse(tb)
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:        strings.Split(addr, ","),
		DialTimeout: testenv.CHDialTimeout,
		ReadTimeout: 60 * time.Second,
	})
	if err != nil {
		tb.Fatal(err)
	}
	opts := schema.Options{Database: fmt.Sprintf("errtrail_lookup_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6, dbSeq.Add(1))}
	tb.Cleanup(func() {
		defer conn.Close()
		// A story whose verdicts ran past their budget leaves its query to
		// the server until it sees the cancel; 18.16's DROP waits for every
		// query of the table: minutes on a loaded machine (a 60 s read
		// timeout failed it while two suites ran). The drop gets a
		// connection of its own without that bound.
		dropConn, err := clickhouse.Open(&clickhouse.Options{Addr: strings.Split(addr, ","), DialTimeout: testenv.CHDialTimeout,
			ReadTimeout: 10 * time.Minute})
		if err != nil {
			tb.Errorf("drop %s: %v", opts.Database, err)
			return
		}
		defer dropConn.Close()
		if err := dropConn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+opts.Database); err != nil {
			tb.Errorf("drop %s: %v", opts.Database, err)
		}
	})
	if _, err := schema.Migrate(context.Background(), conn, opts); err != nil {
		tb.Fatal(err)
	}
	return conn, opts
}

func newFinder(conn driver.Conn, opts schema.Options) *Finder {
	return &Finder{Conn: conn, Database: opts.Database, Redactor: redact.New(testKey),
		Recompute: &alerter.Recomputer{Conn: conn, Database: opts.Database}}
}

// ev is one event of the contract (docs/event-contract.md).
type ev struct {
	ID      string
	At      time.Time
	Agent   string
	Caller  string
	Method  string
	Attempt int
	Source  string // source kind; "agent" when empty
	Request map[string]any
	Status  int
	Headers map[string]string
	Body    string
	Binding string    // "http" when empty
	Trace   [2]string // trace_id, span_id; none when empty
}

func (e ev) json() []byte {
	src := e.Source
	if src == "" {
		src = "agent"
	}
	bind := e.Binding
	if bind == "" {
		bind = "http"
	}
	m := e.Method
	if m == "" {
		m = "SendMessage"
	}
	hs := map[string]string{"Content-Type": "application/json"}
	for k, v := range e.Headers {
		hs[k] = v
	}
	v := map[string]any{
		"v": 1, "event_id": e.ID, "observed_at": e.At.UnixMilli(), "source": map[string]any{"kind": src, "id": src + "-1"},
		"agent": e.Agent, "caller": e.Caller, "method": m,
		"reply": map[string]any{"binding": bind, "http_status": e.Status, "headers": hs, "body": e.Body},
	}
	if e.Attempt > 0 {
		v["attempt"] = e.Attempt
	}
	if e.Trace[0] != "" {
		v["trace_id"], v["span_id"] = e.Trace[0], e.Trace[1]
	}
	if e.Request != nil {
		v["request"] = e.Request
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// store decodes the events with parse, under the test deployment key, and
// inserts them as one landing batch the way ingest does (see landingValues).
func store(tb testing.TB, conn driver.Conn, opts schema.Options, evs ...ev) {
	tb.Helper()
	d := parse.NewDecoder(parse.Options{HashKey: testKey})
	batch, err := conn.PrepareBatch(context.Background(), schema.LandingInsert(opts))
	if err != nil {
		tb.Fatal(err)
	}
	defer batch.Abort()
	for i, e := range evs {
		var rec parse.Record
		if err := d.DecodeMessage(e.json(), nil, e.At.UnixMilli(), &rec); err != nil {
			tb.Fatalf("event %s: %v", e.ID, err)
		}
		if err := batch.Append(landingValues(&rec, "errtrail.replies", int64(offsets.Add(1)+int64(i)), time.Now())...); err != nil {
			tb.Fatal(err)
		}
	}
	if err := batch.Send(); err != nil {
		tb.Fatal(err)
	}
}

var offsets atomic.Int64

// landingValues is one landing row of a decoded record, column for column
// what ingest's columns.appendRow writes (ingest/columns.go), which is not
// exported: the event_id or the Kafka coordinates, observed_at from the
// milliseconds, retryable -1/0/1, retry_after_ms -1 when none, the gRPC
// status name, the JSON-RPC code as it is.
func landingValues(rec *parse.Record, topic string, offset int64, ingested time.Time) []any {
	obs := rec.ObservedAtMS
	tri := int8(-1)
	switch rec.Retryable {
	case parse.TriTrue:
		tri = 1
	case parse.TriFalse:
		tri = 0
	}
	ra := rec.RetryAfterMS
	if ra < 0 {
		ra = -1
	}
	typed := uint8(0)
	if rec.Typed {
		typed = 1
	}
	var vf, vd, fi []string
	for _, v := range rec.FieldViolations {
		vf = append(vf, v.Field)
		vd = append(vd, v.Description)
	}
	for _, f := range rec.Findings {
		fi = append(fi, string(f))
	}
	nz := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return []any{
		uint8(0), rec.EventID, time.Unix(obs/1000, 0).UTC(), uint64(obs), ingested.UTC().Truncate(time.Second),
		topic, int32(0), offset,
		rec.SourceKind, rec.SourceID, rec.Agent, rec.Endpoint, rec.Caller, rec.Method, uint16(max(0, min(rec.Attempt, 65535))),
		rec.HTTPRequestID, rec.JSONRPCID, rec.MessageID, rec.TaskID, rec.IdempotencyHash,
		string(rec.Protocol), string(rec.Binding), string(rec.Envelope), uint16(max(0, min(rec.HTTPStatus, 65535))),
		rec.GRPCStatusName(), int32(rec.JSONRPCCode),
		rec.Code, rec.Reason, rec.Domain, string(rec.Kind), typed,
		tri, string(rec.RetryableSource), ra, string(rec.RetryAfterSource),
		rec.Limit, rec.Scope, rec.ErrorID, rec.RequestID, rec.Message,
		nz(vf), nz(vd), nz(fi),
		"", "", "", rec.SourceVersion,
		rec.TraceID, rec.SpanID, string(rec.Origin), nz(rec.Inferred), uint32(0),
	}
}

// Reply bodies, shaped as the seeds' replies (parse/testdata/seeds).

// rest429 is seed 002's HTTP+JSON quota rejection, with the message given.
func rest429(msg string) string {
	return `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":` + quote(msg) + `,"details":[` +
		`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"agents.example.com","metadata":{"policy":"per-caller","scope":"caller","method":"SendMessage"}},` +
		`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"},` +
		`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"subject":"caller:orchestrator-7","description":"60 requests per 60 s"}]}]}}`
}

// rest503 is seed 002's overload reply.
const rest503 = `{"error":{"code":503,"status":"UNAVAILABLE","message":"Agent overloaded","details":[` +
	`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"AGENT_OVERLOADED","domain":"agents.example.com","metadata":{"scope":"agent"}},` +
	`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"5s"}]}}`

// aapRateLimited is seed 000's complete A2A throttle response with the
// error id given.
func aapRateLimited(errorID string) string {
	return `{"jsonrpc":"2.0","id":"req-rate-limited","error":{"code":-32000,"message":"Per-key rate limit exceeded.","data":[` +
		`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMITED","domain":"autoagentprotocol.org","metadata":{"code":"RATE_LIMITED","error_id":"` + errorID + `","retryable":"true","created_at":"2026-04-30T10:16:00Z"}},` +
		`{"@type":"type.googleapis.com/google.protobuf.Struct","value":{"type":"aap.error","error_id":"` + errorID + `","code":"RATE_LIMITED","message":"Per-key rate limit exceeded.","retryable":true,"details":{"retry_after_ms":30000},"created_at":"2026-04-30T10:16:00Z"}}]}}`
}

// taskNotFound is seed 003's HTTP+JSON TaskNotFoundError (not retryable).
const taskNotFound = `{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[` +
	`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{}}]}}`

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
