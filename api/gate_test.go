package api

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// TestUnitGate: on FAKE services that hold reports until released, a
// client past its share of reports gets 429 at once and another client's
// report waits the queue deadline and gets 503, both with Retry-After;
// a full queue is refused at once; stories, lists and /readyz answer
// meanwhile; once released, the held reports answer and the slots are
// free again. Outcomes and order only: no timing is asserted.
func TestUnitGate(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 16)
	h := newHarness(t, func(c *Config) {
		c.Reports = GateLimits{Concurrency: 2, PerClient: 2, QueueLength: 1}
		c.QueueTimeout = 50 * time.Millisecond
	})
	h.rep.report = func(ctx context.Context, agent string, from, to time.Time) (*report.Report, error) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &report.Report{Agent: agent, From: from, To: to, Source: "agent"}, nil
	}
	a, b, c := "X-Test-Remote: 192.0.2.1:1", "X-Test-Remote: 192.0.2.2:1", "X-Test-Remote: 192.0.2.3:1"
	held := make(chan answer, 2)
	for range 2 {
		go func() { held <- h.get("/v1/agents/alpha/report", a) }()
	}
	<-entered
	<-entered

	if r := h.get("/v1/report", a); r.status != 429 || r.problemCode() != "too-many-concurrent" || r.header.Get("Retry-After") != "1" {
		t.Errorf("a's third report: %d %s Retry-After %q", r.status, r.body, r.header.Get("Retry-After"))
	}
	// b queues; c finds the queue (of 1) full and is refused at once.
	queued := make(chan answer, 1)
	go func() { queued <- h.get("/v1/report", b) }()
	for !strings.Contains(h.metrics(), `errtrail_api_store_questions_queued{class="reports"} 1`) {
		time.Sleep(time.Millisecond)
	}
	if r := h.get("/v1/report", c); r.status != 503 || r.problemCode() != "busy" || r.header.Get("Retry-After") == "" {
		t.Errorf("c with the queue full: %d %s", r.status, r.body)
	}
	if r := <-queued; r.status != 503 || r.problemCode() != "busy" || r.header.Get("Retry-After") != "1" {
		t.Errorf("b past the queue deadline: %d %s Retry-After %q", r.status, r.body, r.header.Get("Retry-After"))
	}
	for _, target := range []string{"/v1/errors/err-1", "/v1/errors?agent=alpha", "/readyz"} {
		if r := h.get(target, c); r.status != 200 {
			t.Errorf("%s while reports are held: %d", target, r.status)
		}
	}
	select {
	case r := <-held:
		t.Fatalf("a held report answered: %d", r.status)
	default:
	}
	close(release)
	for range 2 {
		if r := <-held; r.status != 200 {
			t.Errorf("held report: %d %s", r.status, r.body)
		}
	}
	if r := h.get("/v1/report", b); r.status != 200 {
		t.Errorf("after the release: %d", r.status)
	}
	m := h.metrics()
	for _, want := range []string{
		`errtrail_api_store_questions_refused_total{class="reports",reason="client"} 1`,
		`errtrail_api_store_questions_refused_total{class="reports",reason="queue_full"} 1`,
		`errtrail_api_store_questions_refused_total{class="reports",reason="queue_timeout"} 1`,
		`errtrail_api_store_questions_running{class="reports"} 0`,
		`errtrail_api_store_questions_queued{class="reports"} 0`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, grepLines(m, "store_questions"))
		}
	}
	if strings.Contains(h.logs.String(), `"level":"WARN"`) || strings.Contains(h.logs.String(), `"level":"ERROR"`) {
		t.Errorf("a refusal was logged above INFO: %s", h.logs.String())
	}
}

// TestUnitGateLeavesOnCancel: a request that leaves while queued gives its
// place back (the client's share too).
func TestUnitGateLeavesOnCancel(t *testing.T) {
	g := newGate(classReports, GateLimits{Concurrency: 1, PerClient: 1, QueueLength: 4}, time.Hour, newGateMetrics(newRegistry()))
	rel, err := g.enter(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := g.enter(ctx, "b"); done <- err }()
	for {
		g.mu.Lock()
		q := g.queued
		g.mu.Unlock()
		if q == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("canceled while queued: %v", err)
	}
	rel()
	rel() // twice is once
	if r2, err := g.enter(context.Background(), "b"); err != nil {
		t.Errorf("b after leaving: %v", err)
	} else {
		r2()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.queued != 0 || len(g.clients) != 0 || len(g.slots) != 0 {
		t.Errorf("state left: queued %d clients %v slots %d", g.queued, g.clients, len(g.slots))
	}
}

// TestUnitPagesShareTheGates: the pages get the gated services, keyed by
// the same client.
func TestUnitPagesShareTheGates(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	entered := make(chan struct{}, 4)
	h := newHarness(t, func(c *Config) {
		c.Reports = GateLimits{Concurrency: 4, PerClient: 1, QueueLength: 4}
		c.Pages = func(svc lookup.Service, rep report.Reporter) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := rep.Report(r.Context(), "", time.Now().Add(-time.Hour), time.Now()); err != nil {
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				w.Write([]byte("page"))
			})
		}
	})
	h.rep.report = func(ctx context.Context, agent string, from, to time.Time) (*report.Report, error) {
		entered <- struct{}{}
		<-release
		return &report.Report{}, nil
	}
	defer once.Do(func() { close(release) })
	held := make(chan answer, 1)
	go func() { held <- h.get("/v1/report", "X-Test-Remote: 192.0.2.1:1") }()
	<-entered
	if r := h.get("/report", "X-Test-Remote: 192.0.2.1:1"); r.status != 503 {
		t.Errorf("the same client's report page while its API report runs: %d; want the gate's refusal", r.status)
	}
	once.Do(func() { close(release) })
	if r := <-held; r.status != 200 {
		t.Errorf("held: %d", r.status)
	}
}
