package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// fakeService is a FAKE lookup.Service for the unit tests of the HTTP
// layer: each method answers what its func field says (nil: a fixed
// answer) and records what it was asked. The real, ClickHouse-backed
// lookup.Finder is tested in package lookup.
type fakeService struct {
	story func(ctx context.Context, id string, opt lookup.FindOptions) (*lookup.Story, error)
	list  func(ctx context.Context, q lookup.ListQuery) (*lookup.Page, error)
	ready func(ctx context.Context) error

	mu      sync.Mutex
	gotID   string
	gotOpt  lookup.FindOptions
	gotList lookup.ListQuery
	calls   int
}

func (f *fakeService) Story(ctx context.Context, id string, opt lookup.FindOptions) (*lookup.Story, error) {
	f.mu.Lock()
	f.gotID, f.gotOpt = id, opt
	f.calls++
	fn := f.story
	f.mu.Unlock()
	if fn != nil {
		return fn(ctx, id, opt)
	}
	st := sampleStory()
	return &st, nil
}

func (f *fakeService) List(ctx context.Context, q lookup.ListQuery) (*lookup.Page, error) {
	f.mu.Lock()
	f.gotList = q
	f.calls++
	fn := f.list
	f.mu.Unlock()
	if fn != nil {
		return fn(ctx, q)
	}
	return &lookup.Page{Errors: []lookup.Match{sampleMatch("ev-2"), sampleMatch("ev-1")}, Next: "c2"}, nil
}

func (f *fakeService) Ready(ctx context.Context) error {
	if f.ready != nil {
		return f.ready(ctx)
	}
	return nil
}

// fakeReporter is a FAKE report.Reporter, as fakeService.
type fakeReporter struct {
	report func(ctx context.Context, agent string, from, to time.Time) (*report.Report, error)

	mu             sync.Mutex
	gotAgent       string
	gotFrom, gotTo time.Time
	calls          int
}

func (f *fakeReporter) Report(ctx context.Context, agent string, from, to time.Time) (*report.Report, error) {
	f.mu.Lock()
	f.gotAgent, f.gotFrom, f.gotTo = agent, from, to
	f.calls++
	fn := f.report
	f.mu.Unlock()
	if fn != nil {
		return fn(ctx, agent, from, to)
	}
	r := &report.Report{Agent: agent, From: from, To: to, Replies: 10, Source: "agent",
		Rules: []report.Rule{{Code: "retry_delay_missing", Title: "429 without a delay", Replies: 4, Share: 0.4,
			ExampleEventID: "ev-1", Checks: "a sentence", Change: "send Retry-After"}},
		Clean: []string{"untyped_5xx"}}
	if agent == "" {
		r.Source = "mixed"
		r.Agents = []report.AgentSummary{{Agent: "alpha", Replies: 10, Breaking: 4, Rules: 1, Source: "agent"}}
	}
	return r, nil
}

var t0 = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

func sampleMatch(ev string) lookup.Match {
	return lookup.Match{EventID: ev, ErrorID: "err-" + ev, MatchedAs: "task_id", Agent: "alpha", Caller: "c1",
		Kind: "quota", Code: "RESOURCE_EXHAUSTED", ObservedAt: t0}
}

// sampleStory fills every field, so that the schema sees each one.
func sampleStory() lookup.Story {
	i := func(v int) *int { return &v }
	i64 := func(v int64) *int64 { return &v }
	b := func(v bool) *bool { return &v }
	return lookup.Story{
		MatchedAs: "error_id",
		Record: lookup.Row{
			EventID: "ev-1", ObservedAt: t0, IngestedAt: t0.Add(time.Second), KafkaTopic: "errtrail.errors",
			KafkaPartition: 3, KafkaOffset: 42, SourceKind: "agent", SourceID: "gw-1", Agent: "alpha",
			Endpoint: "/v1/message:send", Caller: "c1", Method: "message/send", Attempt: 2,
			HTTPRequestID: "h-1", JSONRPCID: "7", MessageID: "m-1", TaskID: "t-1", IdempotencyKey: "0123456789abcdef",
			Protocol: "a2a", Binding: "jsonrpc", Envelope: "jsonrpc_error", HTTPStatus: i(429), GRPCStatus: "RESOURCE_EXHAUSTED",
			JSONRPCCode: i(-32000), Code: "RESOURCE_EXHAUSTED", Reason: "RATE_LIMIT", Domain: "example.com",
			Kind: "quota", Typed: true, Retryable: b(true), RetryableSource: "reply", RetryAfterMS: i64(2000),
			RetryAfterSource: "reply", Limit: "requests_per_minute", Scope: "caller", ErrorID: "err-1", RequestID: "r-1",
			Message: "slow down", FieldViolations: []lookup.Field{{Field: "a.b", Description: "too long"}},
			Findings: []string{"retry_delay_missing"},
		},
		Meaning: lookup.Meaning{Headline: "The caller is over its limit.", Details: []string{"Only this caller."}, Advice: "Wait 2s.", Text: "The caller is over its limit. Only this caller."},
		Attempts: lookup.Attempts{Key: "message_id", Attempts: []lookup.Attempt{{EventID: "ev-0", ErrorID: "err-0", Attempt: 1, ObservedAt: t0.Add(-time.Second), Kind: "quota", Code: "RESOURCE_EXHAUSTED", Retryable: b(true), AskedDelayMS: i64(2000), WaitedMS: nil, Next: "error", Violations: []string{"retried_too_soon"}, MessageID: "m-1"}, {EventID: "ev-1", Attempt: 2, ObservedAt: t0, Kind: "quota", WaitedMS: i64(1000), Next: "none_seen", This: true}}, Violations: []string{"retried_too_soon"},
			Rules: []lookup.RetryRule{{Code: "retried_too_soon", Checks: "a seed sentence", Sentence: "retried after 1s of 2s"}}},
		Context: lookup.Context{From: t0.Add(-7 * time.Minute), To: t0.Add(8 * time.Minute),
			Minutes:   []lookup.Minute{{Minute: t0, ByKind: map[string]int64{"quota": 3}}},
			VerdictAt: t0, CallerRunaway: true, RetryStorm: true, RetryStormReasons: []string{"ignored_retry_after"}},
		Findings: []lookup.Finding{{Code: "retry_delay_missing", Title: "429 without a delay", Checks: "a sentence", Change: "send Retry-After"}},
	}
}

// syncBuffer collects log output from concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeClock is a time the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeIncidents is a FAKE incidents.Reader for the unit tests of the HTTP
// layer: it answers what fn says (nil: one open overload) and records the
// filter. The real reader is tested in package incidents.
type fakeIncidents struct {
	fn    func(ctx context.Context, f incidents.Filter) ([]incidents.Incident, error)
	mu    sync.Mutex
	got   incidents.Filter
	calls int
}

func (f *fakeIncidents) Incidents(ctx context.Context, q incidents.Filter) ([]incidents.Incident, error) {
	f.mu.Lock()
	f.got = q
	f.calls++
	fn := f.fn
	f.mu.Unlock()
	if fn != nil {
		return fn(ctx, q)
	}
	return []incidents.Incident{{Kind: incidents.Overload, Agent: "alpha", Start: t0, Fired: t0.Add(20 * time.Second),
		LastSeen: t0.Add(time.Minute), PeakRate: 2, PeakCallers: 4, Evaluations: 5}}, nil
}

// fakeGroups is a FAKE groups.Reader for the unit tests of the HTTP
// layer: it answers what fn says (nil: three groups of alpha, the first
// new) and records the filter. The real reader is tested in package
// groups.
type fakeGroups struct {
	fn    func(ctx context.Context, f groups.Filter) ([]groups.Group, error)
	mu    sync.Mutex
	got   groups.Filter
	calls int
}

func (f *fakeGroups) Groups(ctx context.Context, q groups.Filter) ([]groups.Group, error) {
	f.mu.Lock()
	f.got = q
	f.calls++
	fn := f.fn
	f.mu.Unlock()
	if fn != nil {
		return fn(ctx, q)
	}
	var out []groups.Group
	for i, code := range []string{"TOOL_TIMEOUT", "INTERNAL_ERROR", "RATE_LIMIT_EXCEEDED"} {
		k := groups.Key{Agent: "alpha", Protocol: "a2a", Code: code, Kind: "internal", Method: "SendMessage"}
		g := groups.Group{ID: k.ID(), Key: k, FirstSeen: t0.Add(-time.Duration(i) * time.Hour), LastSeen: t0.Add(-time.Duration(i) * time.Minute),
			Count: 3, Callers: 1, Versions: []groups.Version{}, Hours: []groups.Hour{}, Example: "err_" + code}
		if i == 0 {
			g.State, g.Why = groups.New, "first seen then"
		}
		out = append(out, g)
	}
	return out, nil
}

// harness is one Server on fakes, with its logs, metrics and clock.
type harness struct {
	t     *testing.T
	s     *Server
	svc   *fakeService
	rep   *fakeReporter
	reg   *prometheus.Registry
	logs  *syncBuffer
	clock *fakeClock
	inc   *fakeIncidents
	grp   *fakeGroups
}

// newHarness builds a Server on fakes; mod adjusts the config first.
func newHarness(t *testing.T, mod func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, svc: &fakeService{}, rep: &fakeReporter{}, reg: prometheus.NewRegistry(),
		logs: &syncBuffer{}, clock: &fakeClock{t: t0.Add(30 * time.Minute)}, inc: &fakeIncidents{}, grp: &fakeGroups{}}
	cfg := DefaultConfig()
	cfg.Log = slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Now = h.clock.Now
	cfg.RPS = 0 // the rate-limit tests turn it on
	cfg.Incidents = h.inc
	cfg.Groups = h.grp
	if mod != nil {
		mod(&cfg)
	}
	if cfg.QueueTimeout >= cfg.RequestTimeout { // a test that shortened the request timeout
		cfg.QueueTimeout = cfg.RequestTimeout / 2
	}
	s, err := New(cfg, h.svc, h.rep, h.reg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.s = s
	return h
}

// answer is one recorded answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) problemCode() string {
	var p problem
	_ = jsonUnmarshal(a.body, &p)
	return p.Code
}

// do sends one request (headers as "Name: value" strings) and checks the
// answer against docs/openapi.yaml and the headers every answer carries.
func (h *harness) do(method, target string, body io.Reader, headers ...string) answer {
	h.t.Helper()
	req := httptest.NewRequest(method, target, body)
	for _, hd := range headers {
		k, v, _ := strings.Cut(hd, ":")
		req.Header.Set(k, strings.TrimSpace(v))
	}
	if ra := req.Header.Get("X-Test-Remote"); ra != "" {
		req.RemoteAddr = ra
		req.Header.Del("X-Test-Remote")
	}
	rec := httptest.NewRecorder()
	h.s.ServeHTTP(rec, req)
	a := answer{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	if a.header.Get("X-Content-Type-Options") != "nosniff" || a.header.Get("Cache-Control") != "no-store" {
		h.t.Errorf("%s %s: security headers missing: %v", method, target, a.header)
	}
	// Answers for the pages (Config.Pages) are not the api's to describe;
	// pages_test.go checks them.
	page := h.s.cfg.Pages != nil && !isAPIPath(req.URL.EscapedPath())
	if page {
		return a
	}
	if method == http.MethodGet || method == http.MethodHead {
		checkAnswer(h.t, req.URL.EscapedPath(), a.status, a.header.Get("Content-Type"), a.body)
	} else if a.status != http.StatusMethodNotAllowed {
		h.t.Errorf("%s %s: %d; want 405", method, target, a.status)
	}
	return a
}

func (h *harness) get(target string, headers ...string) answer {
	h.t.Helper()
	return h.do(http.MethodGet, target, nil, headers...)
}

// metrics returns the exposition /metrics serves.
func (h *harness) metrics() string {
	h.t.Helper()
	rec := httptest.NewRecorder()
	h.s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func newRegistry() *prometheus.Registry { return prometheus.NewRegistry() }

// serveOn serves srv on a loopback port until stop.
func serveOn(t *testing.T, srv *http.Server) (url string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = srv.Serve(ln); close(done) }()
	return "http://" + ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}
}
