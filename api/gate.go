package api

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// A gate bounds the questions of one class (lookups, lists, reports) that
// the store is asked at once: at most Concurrency run, a client has at most
// PerClient running or waiting, and the others wait in a queue of at most
// QueueLength for up to QueueTimeout. A client over its share is refused at
// once (429); a request that finds the queue full or waits past the
// deadline is refused with 503. Both carry Retry-After. The rate limit
// bounds how often a client asks; a gate bounds how much of the store it
// holds at once, so that one client's slow reports cannot take every
// connection of the pool.
type gate struct {
	class        string // lookups, lists, reports: the metrics' label
	slots        chan struct{}
	perClient    int
	queueLen     int
	queueTimeout time.Duration
	m            *gateMetrics

	mu      sync.Mutex
	clients map[string]int // requests of a client running or queued; no entry at 0
	queued  int
}

// GateLimits are one gate's settings.
type GateLimits struct {
	Concurrency int // questions of the class running at once
	PerClient   int // of them, running or queued, for one client
	QueueLength int // requests waiting for a slot; beyond, 503 at once
}

func newGate(class string, l GateLimits, queueTimeout time.Duration, m *gateMetrics) *gate {
	return &gate{class: class, slots: make(chan struct{}, l.Concurrency), perClient: l.PerClient, queueLen: l.QueueLength,
		queueTimeout: queueTimeout, m: m, clients: map[string]int{}}
}

// busyError is a gate's refusal. It says nothing of the request.
type busyError struct {
	class      string
	perClient  bool // the client has its share running: 429; else the queue: 503
	retryAfter time.Duration
}

func (e *busyError) Error() string {
	if e.perClient {
		return fmt.Sprintf("this client already has its share of %s running", e.class)
	}
	return fmt.Sprintf("too many %s at once: no slot within the queue deadline", e.class)
}

// RetryAfter is how long the client should wait (the pages read it too).
func (e *busyError) RetryAfter() time.Duration { return e.retryAfter }

// enter takes a slot for client, waiting in the queue when none is free. It
// returns the function that gives the slot back, or a *busyError, or
// ctx's error when the request ends first.
func (g *gate) enter(ctx context.Context, client string) (release func(), err error) {
	g.mu.Lock()
	if g.perClient > 0 && g.clients[client] >= g.perClient {
		g.mu.Unlock()
		g.m.refused.WithLabelValues(g.class, "client").Inc()
		return nil, &busyError{class: g.class, perClient: true, retryAfter: time.Second}
	}
	select {
	case g.slots <- struct{}{}:
		g.clients[client]++
		g.mu.Unlock()
		g.m.running.WithLabelValues(g.class).Inc()
		return g.releaser(client), nil
	default:
	}
	if g.queued >= g.queueLen {
		g.mu.Unlock()
		g.m.refused.WithLabelValues(g.class, "queue_full").Inc()
		return nil, &busyError{class: g.class, retryAfter: g.queueTimeout}
	}
	g.queued++
	g.clients[client]++
	g.mu.Unlock()
	g.m.queued.WithLabelValues(g.class).Inc()

	t := time.NewTimer(g.queueTimeout)
	defer t.Stop()
	leave := func() {
		g.mu.Lock()
		g.queued--
		g.m.queued.WithLabelValues(g.class).Dec()
		g.mu.Unlock()
	}
	select {
	case g.slots <- struct{}{}:
		leave()
		g.m.running.WithLabelValues(g.class).Inc()
		return g.releaser(client), nil
	case <-t.C:
		leave()
		g.forget(client)
		g.m.refused.WithLabelValues(g.class, "queue_timeout").Inc()
		return nil, &busyError{class: g.class, retryAfter: g.queueTimeout}
	case <-ctx.Done():
		leave()
		g.forget(client)
		return nil, ctx.Err()
	}
}

func (g *gate) releaser(client string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			<-g.slots
			g.m.running.WithLabelValues(g.class).Dec()
			g.forget(client)
		})
	}
}

func (g *gate) forget(client string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.clients[client]--; g.clients[client] <= 0 {
		delete(g.clients, client)
	}
}

// gateMetrics are the gates' series, labelled by class.
type gateMetrics struct {
	running, queued *prometheus.GaugeVec   // class
	refused         *prometheus.CounterVec // class, reason: client, queue_full, queue_timeout
}

func newGateMetrics(reg prometheus.Registerer) *gateMetrics {
	const ns, sub = "errtrail", "api"
	m := &gateMetrics{
		running: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "store_questions_running",
			Help: "Lookups, lists and reports asking the store now, by class."}, []string{"class"}),
		queued: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "store_questions_queued",
			Help: "Lookups, lists and reports waiting for a slot, by class."}, []string{"class"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "store_questions_refused_total",
			Help: "Lookups, lists and reports refused by the concurrency limits, by class and reason (client: over the client's share, 429; queue_full, queue_timeout: 503)."},
			[]string{"class", "reason"}),
	}
	for _, c := range []string{classLookups, classLists, classReports} {
		m.running.WithLabelValues(c)
		m.queued.WithLabelValues(c)
		for _, r := range []string{"client", "queue_full", "queue_timeout"} {
			m.refused.WithLabelValues(c, r)
		}
	}
	reg.MustRegister(m.running, m.queued, m.refused)
	return m
}

// The gates' classes.
const (
	classLookups = "lookups"
	classLists   = "lists"
	classReports = "reports"
)

// clientCtxKey carries the client's key (clientID.limit) in a request's
// context, from ServeHTTP to the gates, for the API and the pages alike.
type clientCtxKey struct{}

func clientOf(ctx context.Context) string {
	c, _ := ctx.Value(clientCtxKey{}).(string)
	return c
}

// gatedLookups is a lookup.Service behind the lookups' and lists' gates.
// Ready is not gated: the readiness probe must answer while the gates are
// full (serve gives it a connection pool of its own).
type gatedLookups struct {
	svc          lookup.Service
	story, lists *gate
}

func (g gatedLookups) Story(ctx context.Context, id string, opt lookup.FindOptions) (*lookup.Story, error) {
	release, err := g.story.enter(ctx, clientOf(ctx))
	if err != nil {
		return nil, err
	}
	defer release()
	return g.svc.Story(ctx, id, opt)
}

func (g gatedLookups) List(ctx context.Context, q lookup.ListQuery) (*lookup.Page, error) {
	release, err := g.lists.enter(ctx, clientOf(ctx))
	if err != nil {
		return nil, err
	}
	defer release()
	return g.svc.List(ctx, q)
}

func (g gatedLookups) Ready(ctx context.Context) error { return g.svc.Ready(ctx) }

// gatedReports is a report.Reporter behind the reports' gate.
type gatedReports struct {
	rep report.Reporter
	g   *gate
}

func (g gatedReports) Report(ctx context.Context, agent string, from, to time.Time) (*report.Report, error) {
	release, err := g.g.enter(ctx, clientOf(ctx))
	if err != nil {
		return nil, err
	}
	defer release()
	return g.rep.Report(ctx, agent, from, to)
}
