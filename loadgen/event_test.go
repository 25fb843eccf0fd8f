package loadgen

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// checkEvent validates one produced message against docs/event-contract.md:
// every required member present with its type, body parses as JSON when
// its Content-Type says JSON, gRPC details decode. It returns the event.
func checkEvent(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var e map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("event is not JSON: %v\n%s", err, b)
	}
	fail := func(f string, a ...any) { t.Helper(); t.Fatalf("%s\nevent: %s", sprintf(f, a...), b) }
	if v, _ := e["v"].(json.Number); v.String() != "1" {
		fail("v = %v; want 1", e["v"])
	}
	if ms, err := e["observed_at"].(json.Number).Int64(); err != nil || ms < 1.5e12 || ms > 4e12 {
		fail("observed_at %v is not Unix ms", e["observed_at"])
	}
	if id, _ := e["event_id"].(string); id == "" || len(id) > 128 {
		fail("event_id %q", e["event_id"])
	}
	src, _ := e["source"].(map[string]any)
	if k := src["kind"]; k != "agent" && k != "gateway" && k != "client" {
		fail("source.kind %v", k)
	}
	for _, k := range []string{"agent", "caller", "method", "endpoint"} {
		if s, _ := e[k].(string); s == "" {
			fail("%s missing", k)
		}
	}
	if a, err := e["attempt"].(json.Number).Int64(); err != nil || a < 1 {
		fail("attempt %v", e["attempt"])
	}
	rep, _ := e["reply"].(map[string]any)
	switch rep["binding"] {
	case "grpc":
		g, _ := rep["grpc"].(map[string]any)
		st, err := g["status"].(json.Number).Int64()
		if err != nil || st < 0 || st > 16 {
			fail("reply.grpc.status %v", g["status"])
		}
		tr, _ := g["trailers"].(map[string]any)
		if bin, ok := tr["grpc-status-details-bin"].(string); ok {
			raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(bin, "=")) // grpc-go sends it unpadded
			if err != nil || len(raw) < 4 || raw[0] != 0x08 || int64(raw[1]) != st {
				fail("grpc-status-details-bin does not decode to a Status with code %d: %v", st, err)
			}
		}
	case "http", "jsonrpc":
		if _, err := rep["http_status"].(json.Number).Int64(); err != nil {
			fail("reply.http_status %v", rep["http_status"])
		}
		body, ok := rep["body"].(string)
		if !ok {
			fail("reply.body missing")
		}
		h, _ := rep["headers"].(map[string]any)
		if ct, _ := h["Content-Type"].(string); strings.Contains(ct, "json") && body != "" && !json.Valid([]byte(body)) {
			fail("JSON body does not parse: %q", body)
		}
	default:
		fail("reply.binding %v", rep["binding"])
	}
	return e
}

func sprintf(f string, a ...any) string { return strings.TrimSpace(fmtSprintf(f, a...)) }

func runToBuffer(t *testing.T, sc *Scenario, cfg Config) (*Report, [][]byte) {
	t.Helper()
	var buf bytes.Buffer
	cfg.Scenario, cfg.Output = sc, &buf
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	if buf.Len() == 0 {
		lines = nil
	}
	return r, lines
}

// TestWorkedExampleRun plays seed 002's example end to end (unpaced): 20
// quota replies for orchestrator-7 carrying RetryInfo 1..20 s and the same
// Retry-After, and every retry admitted.
func TestWorkedExampleRun(t *testing.T) {
	sc, err := Builtin("worked-example")
	if err != nil {
		t.Fatal(err)
	}
	r, lines := runToBuffer(t, sc, Config{Clock: "scenario"})
	if r.Produced != 20 || len(lines) != 20 {
		t.Fatalf("produced %d (%d lines); want 20", r.Produced, len(lines))
	}
	delayRE := regexp.MustCompile(`"retryDelay":"(\d+)s"`)
	seen := map[string]bool{}
	for i, l := range lines {
		e := checkEvent(t, l)
		rep := e["reply"].(map[string]any)
		if e["caller"] != "orchestrator-7" || rep["http_status"].(json.Number).String() != "429" {
			t.Fatalf("event %d: caller %v status %v", i, e["caller"], rep["http_status"])
		}
		m := delayRE.FindStringSubmatch(rep["body"].(string))
		ra := rep["headers"].(map[string]any)["Retry-After"]
		if m == nil || m[1] != ra {
			t.Fatalf("event %d: RetryInfo %v, Retry-After %v", i, m, ra)
		}
		seen[m[1]] = true
	}
	for d := 1; d <= 20; d++ {
		if !seen[itoa(d)] {
			t.Fatalf("no rejection with delay %d s (seen %v)", d, seen)
		}
	}
	var orch int64
	for _, a := range r.Admitted {
		if a.Caller == "orchestrator-7" {
			orch = a.N
		}
	}
	if orch != 30 {
		t.Fatalf("orchestrator-7 admitted %d; want 30 (10 from the burst + 20 first retries)", orch)
	}
	if len(r.EventIDs) != 20 || r.EventIDHash == 0 {
		t.Fatalf("manifest ids %d, hash %d", len(r.EventIDs), r.EventIDHash)
	}
}

// TestAllShapesAndFaults runs the demo unpaced and checks every message:
// events against the contract, unique event_ids, poison counted apart,
// gateway observations paired with the agent's by message_id.
func TestAllShapesAndFaults(t *testing.T) {
	sc, err := Builtin("demo")
	if err != nil {
		t.Fatal(err)
	}
	r, lines := runToBuffer(t, sc, Config{Clock: "real", KeepIDs: -1})
	if int64(len(lines)) != r.Produced {
		t.Fatalf("%d lines, report says %d", len(lines), r.Produced)
	}
	ids := map[string]bool{}
	agentView := map[string]float64{}
	var valid, poison int64
	bindings := map[string]bool{}
	for _, l := range lines {
		if len(l) == 0 || l[0] != '{' || !json.Valid(l) || !utf8.Valid(l) || bytes.HasPrefix(l, []byte(`{"v":"1"`)) || len(l) > 1<<20 {
			poison++
			continue
		}
		var probe struct {
			Reply struct {
				BodyJSON any `json:"body_json"`
			} `json:"reply"`
		}
		if json.Unmarshal(l, &probe); probe.Reply.BodyJSON != nil {
			poison++ // too deep
			continue
		}
		valid++
		e := checkEvent(t, l)
		id := e["event_id"].(string)
		if ids[id] {
			t.Fatalf("duplicate event_id %s", id)
		}
		ids[id] = true
		rep := e["reply"].(map[string]any)
		bindings[rep["binding"].(string)] = true
		mid := e["request"].(map[string]any)["message_id"].(string)
		n, _ := rep["http_status"].(json.Number)
		st, _ := n.Float64()
		if e["source"].(map[string]any)["kind"] == "agent" {
			agentView[mid+"/"+e["request"].(map[string]any)["http_request_id"].(string)] = st
		} else if st != 502 {
			t.Fatalf("gateway view with status %v; want 502", st)
		}
	}
	if valid != r.Valid || poison != r.Poison || r.Poison == 0 {
		t.Fatalf("valid %d poison %d; report %d, %d", valid, poison, r.Valid, r.Poison)
	}
	for _, b := range []string{"http", "jsonrpc", "grpc"} {
		if !bindings[b] {
			t.Errorf("no %s reply in the demo", b)
		}
	}
	k := r.ByKind()
	for _, want := range []string{"quota", "overload", "untyped", "gateway/quota"} {
		if k[want] == 0 {
			t.Errorf("demo has no %s events: %v", want, k)
		}
	}
}

func TestGatewayPairs(t *testing.T) {
	sc, _ := Builtin("gateway-rewrite")
	_, lines := runToBuffer(t, sc, Config{})
	type view struct{ agent, gw map[string]any }
	pairs := map[string]*view{}
	for _, l := range lines {
		e := checkEvent(t, l)
		q := e["request"].(map[string]any)
		k := q["message_id"].(string) + "/" + q["http_request_id"].(string)
		if pairs[k] == nil {
			pairs[k] = &view{}
		}
		if e["source"].(map[string]any)["kind"] == "agent" {
			pairs[k].agent = e["reply"].(map[string]any)
		} else {
			pairs[k].gw = e["reply"].(map[string]any)
		}
	}
	for k, p := range pairs {
		if p.agent == nil || p.gw == nil {
			t.Fatalf("%s: unpaired observation", k)
		}
		as, gs := p.agent["http_status"].(json.Number).String(), p.gw["http_status"].(json.Number).String()
		switch {
		case as == "429" && gs == "502": // gw-eu-1 rewrites, keeps the body
			if p.gw["body"] != p.agent["body"] {
				t.Fatalf("%s: rewritten body changed", k)
			}
		case as == gs && p.gw["body"] == "": // gw-us-2 strips
		default:
			t.Fatalf("%s: agent %s %q, gateway %s %q", k, as, p.agent["body"], gs, p.gw["body"])
		}
	}
}

func TestRetryBehaviours(t *testing.T) {
	sc, _ := Builtin("ignores-retry-after")
	_, lines := runToBuffer(t, sc, Config{Clock: "scenario"})
	type first struct {
		at    int64
		delay int64
	}
	last := map[string]first{}  // message_id -> previous attempt
	early := map[string]int{}   // caller -> retries sooner than told
	rotated := map[string]int{} // caller -> retries (attempt>1) whose message_id is new
	retries := map[string]int{}
	for _, l := range lines {
		e := checkEvent(t, l)
		c := e["caller"].(string)
		q := e["request"].(map[string]any)
		mid := q["message_id"].(string)
		at, _ := e["observed_at"].(json.Number).Int64()
		att, _ := e["attempt"].(json.Number).Int64()
		h := e["reply"].(map[string]any)["headers"].(map[string]any)
		d, _ := json.Number(h["Retry-After"].(string)).Int64()
		if att > 1 {
			retries[c]++
			if p, ok := last[mid]; ok {
				if at-p.at < p.delay*1000 {
					early[c]++
				}
			} else {
				rotated[c]++
			}
		}
		last[mid] = first{at, d}
	}
	if early["impatient-caller"] == 0 || early["polite-caller"] != 0 || early["rotating-caller"] != 0 {
		t.Errorf("retries sooner than the delay by caller: %v", early)
	}
	if rotated["rotating-caller"] == 0 || rotated["rotating-caller"] != retries["rotating-caller"] ||
		rotated["polite-caller"] != 0 || rotated["impatient-caller"] != 0 {
		t.Errorf("retries with a new message_id by caller: %v (retries %v)", rotated, retries)
	}
}

func TestCorpusTemplate(t *testing.T) {
	dir := t.TempDir()
	capture := "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 14\r\nX-Request-Id: req_CAPTURED\r\n\r\n" +
		`{"jsonrpc":"2.0","id":"req-1","error":{"code":-32003,"message":"Rate limit exceeded","data":{"code":"rate_limited","request_id":"req_CAPTURED","details":{}}}}`
	if err := os.WriteFile(filepath.Join(dir, "relay-429.http"), []byte(capture), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := ParseScenario([]byte(`
name: corpus
duration: 10s
agents: [{name: relay, shape: "corpus:relay-429.http", limit: {rate_per_min: 60, burst: 1}}]
callers: []
bursts: [{at: 1s, caller: c, agent: relay, count: 3}]
`), dir)
	if err == nil {
		t.Fatal("burst from an unknown caller accepted")
	}
	sc, err = ParseScenario([]byte(`
name: corpus
duration: 10s
agents: [{name: relay, shape: "corpus:relay-429.http", limit: {rate_per_min: 60, burst: 1}}]
callers: [{name: c, rate_per_min: 0, behaviour: no-retry}]
bursts: [{at: 1s, caller: c, agent: relay, count: 3}]
`), dir)
	if err != nil {
		t.Fatal(err)
	}
	_, lines := runToBuffer(t, sc, Config{})
	if len(lines) != 2 {
		t.Fatalf("%d events; want 2 rejections", len(lines))
	}
	for i, l := range lines {
		e := checkEvent(t, l)
		rep := e["reply"].(map[string]any)
		body := rep["body"].(string)
		q := e["request"].(map[string]any)
		if strings.Contains(body, "req_CAPTURED") || !strings.Contains(body, q["http_request_id"].(string)) ||
			!strings.Contains(body, `"id":"`+q["jsonrpc_id"].(string)+`"`) {
			t.Fatalf("event %d: ids not substituted: %s", i, body)
		}
		h := rep["headers"].(map[string]any)
		if h["Retry-After"] != itoa(i+1) || h["X-Request-Id"] != q["http_request_id"] {
			t.Fatalf("event %d: headers %v", i, h)
		}
		if rep["http_status"].(json.Number).String() != "429" || rep["binding"] != "jsonrpc" {
			t.Fatalf("event %d: %v", i, rep)
		}
	}
}

func TestClocks(t *testing.T) {
	sc, _ := Builtin("worked-example")
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r, _ := runToBuffer(t, sc, Config{Clock: "scenario", Start: start})
	// The burst is at 2 s; the events are its 20 rejections.
	if got := time.UnixMilli(r.FirstObservedMS).UTC(); got != start.Add(2*time.Second) {
		t.Errorf("first observed_at %v; want %v", got, start.Add(2*time.Second))
	}
	if r.LastObservedMS != r.FirstObservedMS {
		t.Errorf("scenario clock: observed_at spans %d..%d ms; want every rejection of the burst at 2 s",
			r.FirstObservedMS, r.LastObservedMS)
	}

	// The real clock at speed 20 stamps an event due at scenario time t with
	// ScenarioStarted + t/20, whatever the machine's load, so the stamps are
	// compared exactly with the report's own start and no wall-clock window.
	const speed = 20
	r, lines := runToBuffer(t, sc, Config{Clock: "real", Speed: speed})
	if r.Produced != 20 || len(lines) != 20 {
		t.Fatalf("real clock: produced %d (%d lines); want the burst's 20 rejections", r.Produced, len(lines))
	}
	burst := r.ScenarioStarted.Add(2 * time.Second / speed).UnixMilli()
	for i, l := range lines {
		if got := observedMS(t, l); got != burst {
			t.Errorf("real clock at speed 20: event %d observed %d ms after the scenario's start; want 100 ms (2 s / 20)",
				i, got-r.ScenarioStarted.UnixMilli())
		}
	}
	if r.FirstObservedMS != burst || r.LastObservedMS != burst {
		t.Errorf("report: observed_at %d..%d; want both %d", r.FirstObservedMS, r.LastObservedMS, burst)
	}
	if r.ScenarioStarted.Before(r.Started) {
		t.Errorf("scenario started %v, before the run (%v)", r.ScenarioStarted, r.Started)
	}
	// Paced, the run plays the whole 40 s scenario and cannot end before its
	// last second is due in wall time (40 s / 20 after the start); unpaced it
	// would end as soon as the burst is out.
	if r.ScenarioSec != sc.Total().Seconds() {
		t.Errorf("scenario time played %.2f s; want all %.0f s", r.ScenarioSec, sc.Total().Seconds())
	}
	if end := r.ScenarioStarted.Add(sc.Total() / speed); r.Finished.Before(end) {
		t.Errorf("paced run finished at %v, before the scenario's end was due at %v", r.Finished, end)
	}
}

// observedMS returns the observed_at member of one event.
func observedMS(t *testing.T, line []byte) int64 {
	t.Helper()
	ms, err := checkEvent(t, line)["observed_at"].(json.Number).Int64()
	if err != nil {
		t.Fatalf("observed_at: %v", err)
	}
	return ms
}

func TestBounds(t *testing.T) {
	sc, _ := Builtin("steady")
	r, lines := runToBuffer(t, sc, Config{MaxEvents: 5000})
	if r.Produced != 5000 || len(lines) != 5000 {
		t.Fatalf("max-events 5000: produced %d", r.Produced)
	}
	// Duration bounds the run in wall time; the checks are of order (nothing
	// observed after the deadline, no end before it) and of counts, not of how
	// long the run took on a busy machine.
	const limit = 500 * time.Millisecond
	r, lines = runToBuffer(t, sc, Config{Speed: 1, Duration: limit})
	if r.Produced == 0 || int64(len(lines)) != r.Produced {
		t.Fatalf("duration 500ms: produced %d, %d lines; want some, one line each", r.Produced, len(lines))
	}
	if r.ScenarioSec >= sc.Total().Seconds() {
		t.Errorf("duration 500ms: played %.1f s of scenario time; want it stopped before the scenario's %v",
			r.ScenarioSec, sc.Total())
	}
	deadline := r.ScenarioStarted.Add(limit)
	if last := time.UnixMilli(r.LastObservedMS); last.After(deadline) {
		t.Errorf("duration 500ms: last event observed at %v, after the deadline %v", last, deadline)
	}
	if r.Finished.Before(deadline) {
		t.Errorf("duration 500ms: finished at %v, before the deadline %v, with scenario time left", r.Finished, deadline)
	}
}
