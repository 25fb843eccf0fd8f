package main

// errtrail mcp asked by real MCP clients: the Go SDK's client over the real
// stdio of the built binary and over Streamable HTTP, in both protocol
// revisions, and the Python SDK (testdata/mcp_client.py) the same way, on
// error replies published to the stack's Kafka and stored by ingest in a
// fresh database of its ClickHouse, with secrets planted in them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/internal/stackload"
	"github.com/errtrail/errtrail/internal/testenv"
)

// Planted in the stored replies; no answer may hold one.
const (
	mcpPlantedToken = "Kq3vZ8pLw2xR7mNb4TyU"
	mcpPlantedEmail = "dana.kowalski@customer.example"
	mcpPlantedPass  = "hunter2hunter2"
	mcpPlantedJWT   = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkYW5hIn0.c2lnbmF0dXJlLXNlY3JldA"
	mcpPlantedIdem  = "idem-mcpPlanted-7f3a9c"
	// The other reply's ids: a lookup of the first must not return them.
	otherEvent, otherMsg, otherReq, otherCaller = "ev-mcp-b", "msg-mcp-b-5521", "req-mcp-b-5521", "other-tenant-42"
	mcpToken                                    = "mcp-test-token-0b9d"
)

var mcpPlanted = []string{mcpPlantedToken, mcpPlantedEmail, mcpPlantedPass, mcpPlantedJWT, mcpPlantedIdem, mcpToken}

// mcpFixture is the stored replies and the binary.
type mcpFixture struct {
	data *stackload.Data
	bin  string
}

// rpc429 is an A2A JSON-RPC quota reply whose message holds the planted
// secrets; with retryAfter false it lacks the Retry-After header a 429
// must carry.
func rpc429(id string, retryAfter bool) (headers map[string]string, body string) {
	msg := "Rate limit exceeded: Bearer " + mcpPlantedToken + " rejected for " + mcpPlantedEmail + " password=" + mcpPlantedPass + " jwt " + mcpPlantedJWT
	body = `{"jsonrpc":"2.0","id":"` + id + `","error":{"code":-32603,"message":` + quoteJSON(msg) +
		`,"data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"agents.example.com","metadata":{"policy":"per-caller","scope":"caller"}},` +
		`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}`
	headers = map[string]string{"Content-Type": "application/json", "Set-Cookie": "session=" + mcpPlantedToken}
	if retryAfter {
		headers["Retry-After"] = "12"
	}
	return headers, body
}

func quoteJSON(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestMCP: errtrail mcp on one stored fixture, asked by the Go and the
// Python SDKs' clients.
func TestMCP(t *testing.T) {
	testenv.Kafka(t)
	testenv.ClickHouse(t)
	f, msg := buildMCPFixture(t)
	if msg != "" {
		t.Fatal(msg)
	}
	t.Run("GoClient", func(t *testing.T) { testMCPGoClient(t, f) })
	t.Run("HTTPRefusesWithoutToken", func(t *testing.T) { testMCPHTTPRefusesWithoutToken(t, f) })
	t.Run("Python", func(t *testing.T) { testMCPPython(t, f) })
}

func buildMCPFixture(t *testing.T) (*mcpFixture, string) {
	bin := filepath.Join(t.TempDir(), "errtrail")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("go build: %v\n%s", err, out)
	}
	brokers, topic := stackload.NewTopic(t, "errtrail.mcp.test.")
	now := time.Now().Add(-2 * time.Minute).UnixMilli()
	ha, ba := rpc429("req-41", true)
	hb, bb := rpc429("req-42", false)
	events := []map[string]any{
		{"v": 1, "event_id": "ev-mcp-a", "observed_at": now, "source": map[string]any{"kind": "agent", "id": "agent-1"},
			"agent": "mcp-agent", "endpoint": "https://svc:" + mcpPlantedPass + "@mcp-agent.example/a2a?api_key=" + mcpPlantedToken,
			"caller": mcpPlantedEmail, "method": "SendMessage", "attempt": 1,
			"request": map[string]any{"http_request_id": "req-mcp-a-7781", "jsonrpc_id": "req-41", "message_id": "msg-mcp-a-7781", "idempotency_key": mcpPlantedIdem},
			"reply":   map[string]any{"binding": "jsonrpc", "http_status": 429, "headers": ha, "body": ba}},
		{"v": 1, "event_id": otherEvent, "observed_at": now + 1000, "source": map[string]any{"kind": "agent", "id": "agent-1"},
			"agent": "mcp-agent", "endpoint": "https://mcp-agent.example/a2a", "caller": otherCaller, "method": "SendMessage", "attempt": 1,
			"request": map[string]any{"http_request_id": otherReq, "jsonrpc_id": "req-42", "message_id": otherMsg},
			"reply":   map[string]any{"binding": "jsonrpc", "http_status": 429, "headers": hb, "body": bb}},
	}
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: topic, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	var msgs []kafka.Message
	for _, e := range events {
		b, _ := json.Marshal(e)
		msgs = append(msgs, kafka.Message{Value: b})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		return nil, fmt.Sprintf("publish: %v", err)
	}
	d := stackload.Topic(t, topic, int64(len(events)))
	start := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	if err := incidents.Write(ctx, d.Conn, d.Database, []incidents.Incident{
		{Kind: incidents.Overload, Agent: "mcp-agent", Start: start, Fired: start.Add(20 * time.Second),
			LastSeen: start.Add(4 * time.Minute), End: start.Add(5 * time.Minute), PeakRate: 2, PeakCallers: 4, Evaluations: 25, Version: 2},
	}); err != nil {
		return nil, fmt.Sprintf("incidents: %v", err)
	}
	return &mcpFixture{data: d, bin: bin}, ""
}

func (f *mcpFixture) args(extra ...string) []string {
	return append([]string{"mcp", "--clickhouse.addr", f.data.Addr, "--clickhouse.database", f.data.Database}, extra...)
}

// serveHTTP starts the binary on Streamable HTTP with auth on and returns
// the endpoint; the process stops at the test's end.
func (f *mcpFixture) serveHTTP(t *testing.T) string {
	t.Helper()
	addr := stackload.ClosedPort(t)
	cmd := exec.Command(f.bin, f.args("--mcp.listen", addr, "--auth.tokens-env", "ERRTRAIL_MCP_TEST_TOKENS",
		// Every client of the test is one client of the limiter: room for all their calls.
		"--ratelimit.burst", "400")...)
	cmd.Env = append(os.Environ(), "ERRTRAIL_MCP_TEST_TOKENS="+mcpToken)
	var stderr syncBuf
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("errtrail mcp: %v\n%s", err, stderr.String())
		}
		if log := stderr.String(); containsAny(log, mcpPlanted) != "" {
			t.Errorf("the log holds %s", containsAny(log, mcpPlanted))
		}
	})
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		if cmd.ProcessState != nil {
			t.Fatalf("errtrail mcp exited: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func containsAny(s string, subs []string) string {
	low := strings.ToLower(s)
	for _, x := range subs {
		if strings.Contains(low, strings.ToLower(x)) {
			return fmt.Sprintf("%.6s…", x)
		}
	}
	return ""
}

// badReply is a 429 without Retry-After: it breaks a MUST of seed 000.
func badReply() string {
	h, b := rpc429("req-43", false)
	var s strings.Builder
	s.WriteString("HTTP/1.1 429 Too Many Requests\r\n")
	for _, k := range []string{"Content-Type", "Set-Cookie"} {
		s.WriteString(k + ": " + h[k] + "\r\n")
	}
	fmt.Fprintf(&s, "Content-Length: %d\r\n\r\n%s", len(b), b)
	return s.String()
}

// The calls every client makes, in order; checkAnswers reads the answers.
func mcpCalls() [][2]any {
	return [][2]any{
		{"lookup", map[string]any{"id": "req-mcp-a-7781"}},
		{"check", map[string]any{"reply": badReply()}},
		{"report", map[string]any{"agent": "mcp-agent", "since": "24h"}},
		{"incidents", map[string]any{"agent": "mcp-agent"}},
		{"check", map[string]any{"reply": strings.Repeat("x", 300<<10)}},
		{"lookup", map[string]any{"id": strings.Repeat("a", 300)}},
		{"lookup", map[string]any{"id": "no-such-id-9c1e"}},
		{"report", map[string]any{"agent": "mcp-agent", "since": "900h"}},
		{"lookup", map[string]any{"id": 42}},
		{"groups", map[string]any{"agent": "mcp-agent"}},
	}
}

// answer is one tool result as a client parsed it.
type toolAnswer struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Type, Text string
	} `json:"content"`
}

func (a toolAnswer) text() string {
	var s []string
	for _, c := range a.Content {
		s = append(s, c.Text)
	}
	return strings.Join(s, "\n")
}

// checkAnswers asserts what each of mcpCalls must answer, and that no
// answer holds a planted secret or the other reply's ids.
func checkAnswers(t *testing.T, who string, raw []json.RawMessage) {
	t.Helper()
	if len(raw) != len(mcpCalls()) {
		t.Fatalf("%s: %d answers, want %d", who, len(raw), len(mcpCalls()))
	}
	ans := make([]toolAnswer, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &ans[i]); err != nil {
			t.Fatalf("%s: answer %d: %v", who, i, err)
		}
		if s := containsAny(string(r), mcpPlanted); s != "" {
			t.Errorf("%s: answer %d (%v) holds the planted %s", who, i, mcpCalls()[i][0], s)
		}
		if s := containsAny(string(r), []string{otherEvent, otherMsg, otherReq, otherCaller}); s != "" && i == 0 {
			t.Errorf("%s: the lookup of one reply holds the other reply's %s", who, s)
		}
	}
	// lookup: the story of the stored reply, structured and in words.
	var rec struct {
		Record map[string]any `json:"record"`
	}
	if a := ans[0]; a.IsError || json.Unmarshal(a.StructuredContent, &rec) != nil {
		t.Errorf("%s: lookup: error %v: %s", who, a.IsError, a.text())
	} else {
		if rec.Record["event_id"] != "ev-mcp-a" || rec.Record["agent"] != "mcp-agent" || rec.Record["kind"] != "quota" || rec.Record["caller"] == "" {
			t.Errorf("%s: lookup: record %v; want ev-mcp-a, mcp-agent, quota, a (hashed) caller", who, rec.Record)
		}
		if !strings.Contains(a.text(), "QUOTA") || !strings.Contains(a.text(), "FINDINGS") || !strings.Contains(a.text(), "echoes_secret") {
			t.Errorf("%s: lookup text lacks the kind or the findings:\n%s", who, a.text())
		}
	}
	// check: the known bad reply breaks the Retry-After MUST.
	var chk struct {
		Kind       string `json:"kind"`
		Violations int    `json:"violations"`
		Broken     []struct{ Rule, Level string }
	}
	if a := ans[1]; a.IsError || json.Unmarshal(a.StructuredContent, &chk) != nil || chk.Violations < 1 ||
		!strings.Contains(fmt.Sprint(chk.Broken), "{retry_after_header_missing MUST}") || chk.Kind != "quota" {
		t.Errorf("%s: check: error %v, %+v: %s", who, a.IsError, chk, a.text())
	}
	// report: the agent's rule breaks.
	var rep struct {
		Agent   string `json:"agent"`
		Replies int64  `json:"replies"`
	}
	if a := ans[2]; a.IsError || json.Unmarshal(a.StructuredContent, &rep) != nil || rep.Agent != "mcp-agent" || rep.Replies != 2 ||
		!strings.Contains(string(a.StructuredContent), "retry_after_header_missing") {
		t.Errorf("%s: report: error %v, %+v: %s", who, a.IsError, rep, a.text())
	}
	// incidents: the recorded overload.
	var inc struct {
		Incidents []struct{ Kind, Agent string }
	}
	if a := ans[3]; a.IsError || json.Unmarshal(a.StructuredContent, &inc) != nil || len(inc.Incidents) != 1 || inc.Incidents[0].Kind != "overload" {
		t.Errorf("%s: incidents: error %v, %+v: %s", who, a.IsError, inc, a.text())
	}
	var grp struct {
		Agent  string
		Groups []struct {
			Agent string
			Count uint64
		}
	}
	if a := ans[9]; a.IsError || json.Unmarshal(a.StructuredContent, &grp) != nil || grp.Agent != "mcp-agent" || len(grp.Groups) == 0 {
		t.Errorf("%s: groups: error %v, %+v: %s", who, a.IsError, grp, a.text())
	} else {
		var n uint64
		for _, g := range grp.Groups {
			if g.Agent != "mcp-agent" {
				t.Errorf("%s: groups: a group of %q in mcp-agent's list", who, g.Agent)
			}
			n += g.Count
		}
		if n != 2 {
			t.Errorf("%s: groups count %d errors; want the 2 stored", who, n)
		}
	}
	// Bad arguments: tool errors that say what to change, no structured answer.
	for i, want := range map[int]string{4: "bytes, more than the", 5: "longer than any id", 6: "no stored error reply carries this id", 7: "at most 31 days", 8: "id"} {
		if a := ans[i]; !a.IsError || !strings.Contains(a.text(), want) || len(a.StructuredContent) > 0 && string(a.StructuredContent) != "null" {
			t.Errorf("%s: call %d (%v): error %v, %q; want a tool error saying %q", who, i, mcpCalls()[i][0], a.IsError, a.text(), want)
		}
	}
	if strings.Contains(ans[5].text(), strings.Repeat("a", 300)) || strings.Contains(ans[4].text(), "xxxxxxxx") {
		t.Errorf("%s: a refusal repeats the argument", who)
	}
}

// goCalls makes mcpCalls with the Go SDK's client over t and returns the
// answers as JSON, and the negotiated version.
func goCalls(t *testing.T, tr mcp.Transport, version string) ([]json.RawMessage, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "errtrail-test", Version: "1"}, nil).
		Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Annotations == nil || !tl.Annotations.ReadOnlyHint {
			t.Errorf("tool %s is not annotated read-only", tl.Name)
		}
	}
	if fmt.Sprint(names) != "[check groups incidents lookup report]" {
		t.Errorf("tools %v; want check, groups, incidents, lookup, report", names)
	}
	var out []json.RawMessage
	for _, c := range mcpCalls() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c[0].(string), Arguments: c[1]})
		if err != nil { // a bad argument must be a tool error, never a protocol error
			t.Errorf("%v: protocol error %v", c[0], err)
			out = append(out, json.RawMessage(`{}`))
			continue
		}
		b, _ := json.Marshal(res)
		out = append(out, b)
	}
	return out, cs.InitializeResult().ProtocolVersion
}

// testMCPGoClient: the Go SDK's client, over the binary's stdio and over
// its Streamable HTTP with the bearer token, in both revisions, gets the
// story, the check findings, the report and the incidents, tool errors for
// bad arguments, and nothing mcpPlanted.
func testMCPGoClient(t *testing.T, f *mcpFixture) {
	endpoint := f.serveHTTP(t)
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run("stdio/"+version, func(t *testing.T) {
			cmd := exec.Command(f.bin, f.args()...)
			var stderr syncBuf
			cmd.Stderr = &stderr
			ans, got := goCalls(t, &mcp.CommandTransport{Command: cmd}, version)
			if got != version {
				t.Errorf("negotiated %s, want %s", got, version)
			}
			checkAnswers(t, "go stdio "+version, ans)
			if s := containsAny(stderr.String(), mcpPlanted); s != "" {
				t.Errorf("stderr holds %s", s)
			}
		})
		t.Run("http/"+version, func(t *testing.T) {
			ans, got := goCalls(t, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1,
				HTTPClient: &http.Client{Transport: bearerRT{mcpToken}}}, version)
			if got != version {
				t.Errorf("negotiated %s, want %s", got, version)
			}
			checkAnswers(t, "go http "+version, ans)
		})
	}
}

// testMCPHTTPRefusesWithoutToken: without a bearer token, or with a wrong
// one, Streamable HTTP answers 401 before MCP is spoken, and the Go client
// cannot connect; a body over the limit is refused whole.
func testMCPHTTPRefusesWithoutToken(t *testing.T, f *mcpFixture) {
	endpoint := f.serveHTTP(t)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, auth := range []string{"", "Bearer wrong-token", "Basic " + mcpToken} {
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" || strings.Contains(body.String(), "serverInfo") {
			t.Errorf("auth %q: %d %q; want 401 with WWW-Authenticate and no MCP answer", auth, resp.StatusCode, body.String())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if cs, err := mcp.NewClient(&mcp.Implementation{Name: "x", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil); err == nil {
		cs.Close()
		t.Error("the Go client connected without a token")
	}
	// With the token the same request is answered.
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(init))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+mcpToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with the token: %d", resp.StatusCode)
	}
	// The refusals and the answer are counted under the route "mcp", and
	// no token or path reaches a series.
	resp, err = http.Get(strings.TrimSuffix(endpoint, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var m bytes.Buffer
	_, _ = m.ReadFrom(resp.Body)
	resp.Body.Close()
	// Three refusals above (one "Basic", which is no bearer token), and
	// the Go client's attempts (each a 401 without a token).
	if series(m.String(), `errtrail_api_requests_total{code="401",route="mcp"}`) < 4 ||
		series(m.String(), `errtrail_api_requests_total{code="200",route="mcp"}`) != 1 ||
		series(m.String(), `errtrail_api_auth_failures_total{reason="invalid"}`) != 1 ||
		series(m.String(), `errtrail_api_auth_failures_total{reason="missing"}`) < 3 {
		t.Errorf("metrics do not count the refusals and the answer:\n%s", grepLines(m.String(), "errtrail_api_requests_total", "auth_failures"))
	}
	if s := containsAny(m.String(), []string{mcpToken, "wrong-token", "/mcp"}); s != "" {
		t.Errorf("metrics hold %s", s)
	}
}

// series returns the value of the series named exactly name (-1: none).
func series(metrics, name string) float64 {
	for _, l := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err == nil {
				return f
			}
		}
	}
	return -1
}

func grepLines(s string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, x := range subs {
			if strings.Contains(l, x) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// pythonWithMCP is the venv scripts/stack installs the MCP Python SDK into
// (scripts/stack install); missing, the test skips outside CI and fails in
// CI.
func pythonWithMCP(t *testing.T) string {
	t.Helper()
	cache := os.Getenv("ERRTRAIL_CACHE") // as scripts/stack finds it
	if cache == "" {
		if cache = os.Getenv("XDG_CACHE_HOME"); cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(cache, "errtrail")
	}
	py := filepath.Join(cache, "venv", "bin", "python")
	if runtime.GOOS == "windows" {
		t.Skip("the venv layout is Unix's")
	}
	if err := exec.Command(py, "-c", "import mcp, httpx2").Run(); err != nil {
		msg := fmt.Sprintf("%s cannot import the MCP Python SDK (%v): run scripts/stack install", py, err)
		if testenv.InCI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return py
}

// testMCPPython: the MCP Python SDK's client, over Streamable HTTP with the
// token and over the binary's stdio, in the 2026-07-28 protocol (auto:
// server/discover) and the 2025-11-25 handshake (legacy), gets the same
// answers as the Go client, and nothing mcpPlanted.
func testMCPPython(t *testing.T, f *mcpFixture) {
	py := pythonWithMCP(t)
	endpoint := f.serveHTTP(t)
	calls, _ := json.Marshal(mcpCalls())
	callsFile := filepath.Join(t.TempDir(), "calls.json")
	if err := os.WriteFile(callsFile, calls, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, mode, want string
		args             []string
	}{
		{"http/auto", "auto", "2026-07-28", []string{"--url", endpoint, "--token-env", "ERRTRAIL_MCP_TEST_TOKENS"}},
		{"http/legacy", "legacy", "2025-11-25", []string{"--url", endpoint, "--token-env", "ERRTRAIL_MCP_TEST_TOKENS"}},
		{"stdio/auto", "auto", "2026-07-28", append([]string{"--stdio", f.bin}, f.args()...)},
		{"stdio/legacy", "legacy", "2025-11-25", append([]string{"--stdio", f.bin}, f.args()...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"testdata/mcp_client.py", "--mode", c.mode, "--calls", callsFile}, c.args...)
			cmd := exec.Command(py, args...)
			cmd.Env = append(os.Environ(), "ERRTRAIL_MCP_TEST_TOKENS="+mcpToken)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("python client: %v\n%s", err, stderr.String())
			}
			var out struct {
				ProtocolVersion string            `json:"protocol_version"`
				Tools           []string          `json:"tools"`
				Calls           []json.RawMessage `json:"calls"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("%v: %s", err, stdout.String())
			}
			if out.ProtocolVersion != c.want || fmt.Sprint(out.Tools) != "[check groups incidents lookup report]" {
				t.Errorf("version %s, tools %v; want %s and the five tools", out.ProtocolVersion, out.Tools, c.want)
			}
			checkAnswers(t, "python "+c.name, out.Calls)
		})
	}
}

// TestUnitMCPUsage: settings that cannot work are refused with exit 2 and
// a reason before anything is served (no server is asked).
func TestUnitMCPUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--auth.tokens-env", "X"}, "--auth.* applies to Streamable HTTP"},
		{[]string{"lookup-id"}, "mcp takes flags only"},
		{[]string{"--mcp.max-reply-bytes", "10"}, "at least 1024"},
		{[]string{"--mcp.listen", "127.0.0.1:0", "--mcp.path", "mcp"}, "must start with /"},
		{[]string{"--clickhouse.max-conns", "3"}, "--clickhouse.max-conns must be at least"},
		{[]string{"--limits.lists.concurrency", "3"}, "flag provided but not defined"}, // no tool lists errors
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"mcp"}, c.args...), &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) || out.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want 2 saying %q and nothing on stdout", c.args, code, errb.String(), out.String(), c.want)
		}
	}
}
