package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/errtrail/errtrail/internal/stackload"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/parse"
)

const missingTask = "00000000-0000-4000-8000-00000000dead"

// executor is a real a2a-go executor: "crash" fails, "two-events" yields
// a task, waits for release, then completes it; anything else answers.
type executor struct{ release chan struct{} }

func (x executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := ""
		if ec.Message != nil && len(ec.Message.Parts) > 0 {
			if s, ok := ec.Message.Parts[0].Content.(a2a.Text); ok {
				text = string(s)
			}
		}
		switch text {
		case "crash":
			yield(nil, errors.New("database connection refused"))
		case "two-events":
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			select {
			case <-x.release:
			case <-ctx.Done():
				return
			}
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
		default:
			yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("ok")), nil)
		}
	}
}

func (executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// agents starts a real a2a-go agent: JSON-RPC at /jsonrpc and HTTP+JSON at
// / on an HTTP/1.1 server, and its gRPC service on a gRPC server.
func agents(t *testing.T, release chan struct{}) (httpURL, grpcAddr string) {
	h := a2asrv.NewHandler(executor{release}, a2asrv.WithCapabilityChecks(&a2a.AgentCapabilities{Streaming: true}))
	mux := http.NewServeMux()
	mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(h))
	mux.Handle("/", a2asrv.NewRESTHandler(h))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	gs := grpc.NewServer()
	grpcv1.NewHandler(h).RegisterWith(gs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	return hs.URL, ln.Addr().String()
}

// startTap runs the command's serve in front of upstream and returns the
// proxy and admin addresses.
func startTap(t testing.TB, upstream string, brokers []string, topic string) (string, string) {
	t.Helper()
	return serveTap(t, "--upstream", upstream, "--http.listen-address", "127.0.0.1:0", "--metrics.listen-address", "127.0.0.1:0",
		"--kafka.brokers", strings.Join(brokers, ","), "--kafka.topic", topic, "--agent", "research-agent",
		"--source.id", "tap-1", "--caller.header", "X-Caller", "--log.level", "warn")
}

// serveTap runs the command's serve with args until the test ends and
// returns the proxy's and the admin server's addresses.
func serveTap(t testing.TB, args ...string) (string, string) {
	t.Helper()
	o, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan [2]string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, o, slog.New(slog.NewTextHandler(io.Discard, nil)), func(p, a string) { addrs <- [2]string{p, a} })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case a := <-addrs:
		return a[0], a[1]
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return "", ""
}

type httpCall struct {
	name, method, path, body string
	code                     string // parse.Record Code or Reason, "" for any
	event                    bool
}

func jrpc(id, method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":%q,"params":%s}`, id, method, params)
}

func msg(id, text string) string {
	return fmt.Sprintf(`{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]}}`, id, text)
}

var httpCalls = []httpCall{
	{"jsonrpc-task-not-found", "POST", "/jsonrpc", jrpc("r1", "GetTask", `{"id":"`+missingTask+`"}`), "TASK_NOT_FOUND", true},
	{"jsonrpc-executor-failure", "POST", "/jsonrpc", jrpc("r2", "SendMessage", msg("m-2", "crash")), "", true},
	{"rest-task-not-found", "GET", "/tasks/" + missingTask, "", "TASK_NOT_FOUND", true},
	{"rest-unsupported-operation", "GET", "/extendedAgentCard", "", "UNSUPPORTED_OPERATION", true},
	{"jsonrpc-success", "POST", "/jsonrpc", jrpc("r5", "SendMessage", msg("m-5", "hello")), "", false},
}

// get sends one call and returns the reply as raw HTTP/1.1 bytes (status,
// headers sorted, body with its length), without Date.
func get(t *testing.T, base string, c httpCall) []byte {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, _ := http.NewRequest(c.method, base+c.path, body)
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Request-Id", c.name)
	req.Header.Set("X-Caller", "orchestrator-7")
	req.Header.Set("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "HTTP/1.1 %s\r\n", resp.Status)
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		if k != "Date" && k != "Content-Length" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range resp.Header[k] {
			fmt.Fprintf(&out, "%s: %s\r\n", k, v)
		}
	}
	fmt.Fprintf(&out, "Content-Length: %d\r\n\r\n", len(b))
	out.Write(b)
	return out.Bytes()
}

type grpcCall struct {
	name, method string
	do           func(ctx context.Context, c pb.A2AServiceClient, h, tr *metadata.MD) error
}

func pbMsg(id, text string) *pb.SendMessageRequest {
	return &pb.SendMessageRequest{Message: &pb.Message{MessageId: id, Role: pb.Role_ROLE_USER,
		Parts: []*pb.Part{{Content: &pb.Part_Text{Text: text}}}}}
}

var grpcCalls = []grpcCall{
	{"grpc-task-not-found", "GetTask", func(ctx context.Context, c pb.A2AServiceClient, h, tr *metadata.MD) error {
		_, err := c.GetTask(ctx, &pb.GetTaskRequest{Id: missingTask}, grpc.Header(h), grpc.Trailer(tr))
		return err
	}},
	{"grpc-executor-failure", "SendMessage", func(ctx context.Context, c pb.A2AServiceClient, h, tr *metadata.MD) error {
		_, err := c.SendMessage(ctx, pbMsg("m-g2", "crash"), grpc.Header(h), grpc.Trailer(tr))
		return err
	}},
	{"grpc-stream-executor-failure", "SendStreamingMessage", func(ctx context.Context, c pb.A2AServiceClient, h, tr *metadata.MD) error {
		s, err := c.SendStreamingMessage(ctx, pbMsg("m-g3", "crash"))
		if err != nil {
			return err
		}
		for err == nil {
			_, err = s.Recv()
		}
		*tr = s.Trailer()
		return err
	}},
}

// grpcText writes what the gRPC client received in the contract's text form.
func grpcText(err error, tr metadata.MD) []byte {
	st := status.Convert(err)
	var b strings.Builder
	fmt.Fprintf(&b, "GRPC 200\ncontent-type: application/grpc\ngrpc-status: %d\n", st.Code())
	if m := st.Message(); m != "" {
		enc := url.PathEscape(m) // close enough for the ASCII messages here; the decoder percent-decodes
		fmt.Fprintf(&b, "grpc-message: %s\n", enc)
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

func callGRPC(t *testing.T, addr string, c grpcCall) []byte {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-request-id", c.name, "x-caller", "orchestrator-7",
		"authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl")
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var h, tr metadata.MD
	err = c.do(ctx, pb.NewA2AServiceClient(conn), &h, &tr)
	if err == nil {
		t.Fatalf("%s: no error", c.name)
	}
	return grpcText(err, tr)
}

func decode(t *testing.T, value []byte, hs []parse.MsgHeader) *parse.Record {
	t.Helper()
	var rec parse.Record
	if err := parse.NewDecoder(parse.Options{}).DecodeMessage(value, hs, 0, &rec); err != nil {
		t.Fatalf("decode: %v\n%s", err, value)
	}
	return rec.Clone()
}

// contextHeaders gives a raw reply the event's context as Kafka headers
// (docs/event-contract.md), so the two decodes compare on every field.
func contextHeaders(t *testing.T, ev []byte, rec *parse.Record) []parse.MsgHeader {
	var m struct {
		EventID  string `json:"event_id"`
		Source   struct{ Kind, ID string }
		Agent    string
		Endpoint string
		Caller   string
		Method   string
		Attempt  int
		Request  struct {
			HTTPRequestID  string          `json:"http_request_id"`
			JSONRPCID      json.RawMessage `json:"jsonrpc_id"`
			MessageID      string          `json:"message_id"`
			TaskID         string          `json:"task_id"`
			IdempotencyKey string          `json:"idempotency_key"`
		}
		Reply struct{ Binding string }
	}
	if err := json.Unmarshal(ev, &m); err != nil {
		t.Fatal(err)
	}
	var hs []parse.MsgHeader
	add := func(k, v string) {
		if v != "" {
			hs = append(hs, parse.MsgHeader{Key: k, Value: []byte(v)})
		}
	}
	id := string(m.Request.JSONRPCID)
	if strings.HasPrefix(id, `"`) {
		json.Unmarshal(m.Request.JSONRPCID, &id)
	}
	add("errtrail-v", "1")
	add("errtrail-event-id", m.EventID)
	add("errtrail-observed-at", strconv.FormatInt(rec.ObservedAtMS, 10))
	add("errtrail-source-kind", m.Source.Kind)
	add("errtrail-source-id", m.Source.ID)
	add("errtrail-agent", m.Agent)
	add("errtrail-endpoint", m.Endpoint)
	add("errtrail-caller", m.Caller)
	add("errtrail-method", m.Method)
	if m.Attempt > 0 {
		add("errtrail-attempt", strconv.Itoa(m.Attempt))
	}
	add("errtrail-http-request-id", m.Request.HTTPRequestID)
	add("errtrail-jsonrpc-id", id)
	add("errtrail-message-id", m.Request.MessageID)
	add("errtrail-task-id", m.Request.TaskID)
	add("errtrail-idempotency-key", m.Request.IdempotencyKey)
	add("errtrail-binding", m.Reply.Binding)
	add("errtrail-trace-id", rec.TraceID)
	add("errtrail-span-id", rec.SpanID)
	return hs
}

// sameRecord fails unless the event and the raw reply decode to the same
// record, field by field.
func sameRecord(t *testing.T, name string, ev, raw []byte) *parse.Record {
	a := decode(t, ev, nil)
	b := decode(t, raw, contextHeaders(t, ev, a))
	va, vb := reflect.ValueOf(*a), reflect.ValueOf(*b)
	for i := 0; i < va.NumField(); i++ {
		x, y := va.Field(i), vb.Field(i)
		if va.Type().Field(i).Name == "Origin" {
			continue // the form decoded: event JSON and raw reply by definition
		}
		if x.Kind() == reflect.Slice && x.Len() == 0 && y.Len() == 0 {
			continue
		}
		if !reflect.DeepEqual(x.Interface(), y.Interface()) {
			t.Errorf("%s: %s: from the event %#v; from the wire %#v", name, va.Type().Field(i).Name, x.Interface(), y.Interface())
		}
	}
	return b
}

// replyTime matches the time a2a-go writes into an ErrorInfo's metadata
// when it answers (JSON or protobuf): two requests a moment apart can
// differ there only.
var replyTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)

// replyTimeMasked is b with each replyTime replaced by a fixed one of the
// same length.
func replyTimeMasked(b []byte) []byte {
	return replyTime.ReplaceAllFunc(b, func(m []byte) []byte {
		return bytes.Repeat([]byte{'#'}, len(m))
	})
}

// TestTapThroughKafka puts the tap in front of a real a2a-go agent
// (JSON-RPC and HTTP+JSON on one tap, gRPC through h2c on another), provokes
// errors, and checks each event read back from the stack's Kafka: no
// credential, and the same decoded record as the reply the client got.
// Replies through the tap are the upstream's bytes; the success publishes
// nothing; /metrics counts requests.
func TestTapThroughKafka(t *testing.T) {
	brokers, topic := kafkaTopic(t)
	httpURL, grpcAddr := agents(t, nil)
	httpTap, admin := startTap(t, httpURL, brokers, topic)
	grpcTap, _ := startTap(t, "http://"+grpcAddr, brokers, topic)

	wires := map[string][]byte{}
	n := 0
	for _, c := range httpCalls {
		direct := get(t, httpURL, c)
		via := get(t, "http://"+httpTap, c)
		if c.event && !bytes.Equal(replyTimeMasked(direct), replyTimeMasked(via)) {
			t.Errorf("%s: reply through the tap differs:\n%s\ndirect:\n%s", c.name, via, direct)
		}
		if c.event {
			wires[c.name] = via
			n++
		}
	}
	for _, c := range grpcCalls {
		direct := callGRPC(t, grpcAddr, c)
		via := callGRPC(t, grpcTap, c)
		if !bytes.Equal(replyTimeMasked(direct), replyTimeMasked(via)) {
			t.Errorf("%s: gRPC reply through the tap differs:\n%s\ndirect:\n%s", c.name, via, direct)
		}
		wires[c.name] = via
		n++
	}
	evs := readEvents(t, brokers, topic, n)
	seen := map[string]bool{}
	var stored []stackload.StoredCase
	for _, ev := range evs {
		if strings.Contains(string(ev), "eyJhbGciOiJIUzI1NiJ9") {
			t.Errorf("token in event %s", ev)
		}
		rec := decode(t, ev, nil)
		name, eventID := rec.HTTPRequestID, rec.EventID
		raw, ok := wires[name]
		if !ok || seen[name] {
			t.Errorf("unexpected event %s", ev)
			continue
		}
		seen[name] = true
		rec = sameRecord(t, name, ev, raw)
		stored = append(stored, stackload.StoredCase{Name: name, EventID: eventID, Wire: rec})
		if rec.Agent != "research-agent" || rec.Caller != "orchestrator-7" || rec.SourceKind != "agent" || rec.Method == "" {
			t.Errorf("%s: agent %q caller %q source %q method %q", name, rec.Agent, rec.Caller, rec.SourceKind, rec.Method)
		}
		for _, c := range httpCalls {
			if c.name == name && c.code != "" && rec.Code != c.code && rec.Reason != c.code {
				t.Errorf("%s: code %q reason %q; want %s", name, rec.Code, rec.Reason, c.code)
			}
		}
		for _, c := range grpcCalls {
			if c.name == name && (rec.Method != c.method || rec.Binding != parse.BindingGRPC) {
				t.Errorf("%s: method %q binding %v; want %s over gRPC", name, rec.Method, rec.Binding, c.method)
			}
		}
		t.Logf("%s: kind %s code %s method %s grpc %d", name, rec.Kind, rec.Code, rec.Method, rec.GRPCCode)
	}
	if len(seen) != n {
		t.Errorf("%d of %d events", len(seen), n)
	}
	stackload.CheckStored(t, topic, len(evs), stored)
	m := scrape(t, admin)
	if !strings.Contains(m, `errtrail_tap_requests_total{protocol="http"} 5`) || !strings.Contains(m, "errtrail_emit_sent_total") {
		t.Errorf("metrics:\n%s", m)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + admin + p)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("%s: %v %v", p, resp, err)
		} else {
			resp.Body.Close()
		}
	}
}

func scrape(t *testing.T, admin string) string {
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestTapStreamsAsTheyCome: the client reads the first SSE event of a
// successful stream while the upstream still holds back the second (it
// waits for the client's signal), so the tap does not buffer.
func TestTapStreamsAsTheyCome(t *testing.T) {
	release := make(chan struct{})
	httpURL, _ := agents(t, release)
	tapAddr, _ := startTap(t, httpURL, []string{closedPort(t)}, "unused")
	body := jrpc("s1", "SendStreamingMessage", msg("m-s1", "two-events"))
	resp, err := http.Post("http://"+tapAddr+"/jsonrpc", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	got := make(chan string, 1)
	br := bufio.NewReader(resp.Body)
	go func() {
		var ev strings.Builder
		for {
			line, err := br.ReadString('\n')
			ev.WriteString(line)
			if err != nil || line == "\n" || line == "\r\n" {
				got <- ev.String()
				return
			}
		}
	}()
	select {
	case ev := <-got:
		if !strings.Contains(ev, "TASK_STATE_SUBMITTED") {
			t.Errorf("first event %q", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first SSE event did not reach the client before the upstream wrote the second: the tap buffers")
	}
	close(release)
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), "TASK_STATE_COMPLETED") {
		t.Errorf("rest of the stream %q", rest)
	}
}

// closedPort returns host:port where nothing listens: a port drawn for this
// process, which no other test binds (a port found by closing a listener
// on port 0 can be another process's next listener).
func closedPort(t testing.TB) string { return testenv.FreeAddr(t) }

// TestTapKafkaDown: with Kafka unreachable the replies through the tap are
// the upstream's bytes and the events are dropped and counted.
func TestTapKafkaDown(t *testing.T) {
	httpURL, grpcAddr := agents(t, nil)
	httpTap, admin := startTap(t, httpURL, []string{closedPort(t)}, "errtrail.replies")
	grpcTap, grpcAdmin := startTap(t, "http://"+grpcAddr, []string{closedPort(t)}, "errtrail.replies")
	errors := 0
	for _, c := range httpCalls {
		if direct, via := get(t, httpURL, c), get(t, "http://"+httpTap, c); c.event && !bytes.Equal(replyTimeMasked(direct), replyTimeMasked(via)) {
			t.Errorf("%s: reply through the tap differs:\n%s\ndirect:\n%s", c.name, via, direct)
		}
		if c.event {
			errors++
		}
	}
	c := grpcCalls[0]
	if direct, via := callGRPC(t, grpcAddr, c), callGRPC(t, grpcTap, c); !bytes.Equal(replyTimeMasked(direct), replyTimeMasked(via)) {
		t.Errorf("%s: gRPC reply differs:\n%s\ndirect:\n%s", c.name, via, direct)
	}
	for _, w := range []struct {
		admin string
		n     int
	}{{admin, errors}, {grpcAdmin, 1}} {
		want := fmt.Sprintf(`errtrail_emit_dropped_total{reason="kafka_error"} %d`, w.n)
		deadline := time.Now().Add(60 * time.Second)
		for {
			m := scrape(t, w.admin)
			if strings.Contains(m, want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s in\n%s", want, m)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if resp, err := http.Get("http://" + admin + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Errorf("healthz: %v %v", resp, err)
	}
}

// kafkaTopic makes a fresh topic on the stack's broker, dropped at the end.
func kafkaTopic(t *testing.T) ([]string, string) { return stackload.NewTopic(t, "errtrail.tap-test.") }

// readEvents reads n messages of the topic back from Kafka.
func readEvents(t *testing.T, brokers []string, topic string, n int) [][]byte {
	return stackload.ReadTopic(t, brokers, topic, n)
}
