package alerter

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const namespace = "errtrail_alerter"

// Metrics exposes the alerter's verdicts and its own health.
//
// Verdict series come from the latest successful evaluation and are exported
// only while it is younger than StaleAfter: when ClickHouse is unreachable
// they vanish (absent, never zero) and data_age_seconds keeps growing.
type Metrics struct {
	staleAfter time.Duration
	clock      func() time.Time
	started    time.Time

	mu        sync.Mutex
	links     Links
	latest    *Verdicts
	lastOK    time.Time // when the latest successful evaluation finished
	lastTry   bool      // whether the latest evaluation succeeded
	evaluated bool

	// Health, ordinary client_golang metrics.
	evalDuration prometheus.Histogram
	evaluations  *prometheus.CounterVec
	queryErrors  *prometheus.CounterVec
	queryRows    *prometheus.GaugeVec
	queryTime    *prometheus.GaugeVec
	incidentOps  *prometheus.CounterVec
}

var (
	dLinks      = desc("links_info", "Always 1; the labels are the base URLs the alert rules build their links from (--links.grafana-url, --links.lookup-url).", "grafana_url", "lookup_url")
	dUp         = desc("clickhouse_up", "1 if the latest evaluation read ClickHouse successfully, else 0.")
	dDataAge    = desc("data_age_seconds", "Seconds since the latest successful evaluation (since start if none yet).")
	dLastOK     = desc("last_success_timestamp_seconds", "Unix time of the latest successful evaluation (0 if none yet).")
	dStale      = desc("stale", "1 when the verdict series are withheld because the latest successful evaluation is older than --evaluation.stale-after.")
	dWindow     = desc("window_seconds", "Seconds the current window of the exported verdicts covers.")
	dHistory    = desc("history_seconds", "Seconds of baseline errtrail has data for (from the first baseline bucket with any reply, at most --window.baseline).")
	dHistoryOK  = desc("history_sufficient", "1 when history_seconds reaches --history.min: callers are judged against their own past; 0: only against their peers, and limit_too_low is not claimed.")
	dAgentsSeen = desc("agents_seen", "Agents evaluated (before the --agent.top-k cap).")
	dAgentsCap  = desc("agents_capped", "Agents beyond --agent.top-k, summed into agent=\"(other)\" (never an agent with a verdict).")
	dLimitUndec = desc("limit_too_low_undecided", "1 when the agent has quota rejections but too little history to say whether they rose (limit_too_low is then 0).", "agent")
	dUndecided  = desc("runaway_undecided_callers", "Callers that would be runaway candidates but have neither a past of their own nor enough peers to compare with.", "agent")
	dErrRate    = desc("agent_errors_per_second", "Error replies per second from the agent in the current window.", "agent")
	dCallers    = desc("agent_active_callers", "Callers with error replies from the agent in the window or the baseline.", "agent")
	dOvRate     = desc("overload_per_second", "Overload replies (503, UNAVAILABLE, AGENT_OVERLOADED) per second in the short overload window (--overload.window).", "agent")
	dOvBase     = desc("overload_baseline_per_second", "Median overload replies per second over the baseline.", "agent")
	dOvCallers  = desc("overload_callers", "Callers that got overload replies in the overload window.", "agent")
	dOverloaded = desc("agent_overloaded", "Verdict: 1 when the agent is overloaded (docs/alerting.md#agent-overloaded).", "agent")
	dQuota      = desc("quota_rejections_per_second", "Quota rejections per second in the current window, by limit/policy name (top-k per agent, rest 'other').", "agent", "limit")
	dQuotaAll   = desc("agent_quota_rejections_per_second", "Quota rejections per second in the current window, all limits.", "agent")
	dQCallers   = desc("quota_callers", "Callers with quota rejections in the current window.", "agent")
	dQRising    = desc("quota_rising_callers", "Callers whose quota rejections rose above their baseline (0 without enough history: history_sufficient).", "agent")
	dLimitLow   = desc("limit_too_low", "Verdict: 1 when quota rejections rose across most callers (docs/alerting.md#limit-too-low).", "agent")
	dUntypedR   = desc("untyped_ratio", "Share of the agent's replies in the window that are untyped errors: no typed reason and a kind that cannot tell quota from crash (a bare 500 or 502; not a bare 429 or 503, not an untyped gRPC RESOURCE_EXHAUSTED). Absent when the agent had no replies.", "agent")
	dUntyped    = desc("untyped_errors", "Verdict: 1 when the agent's untyped errors in the window (see untyped_ratio) reach --untyped.min-count and --untyped.min-share of its replies (docs/alerting.md#untyped-errors).", "agent")
	dRunawayN   = desc("runaway_callers", "Number of the agent's callers flagged as runaway.", "agent")
	dStormN     = desc("retry_storm_callers", "Number of the agent's callers flagged for a retry storm.", "agent")
	dScore      = desc("caller_runaway_score", "Flagged callers only (top-k): error rate / max(baseline, floor); by = own_baseline (its own median) or peers (the median rate of the agent's other callers now).", "agent", "caller", "by")
	dRunaway    = desc("caller_runaway", "Verdict, flagged callers only (top-k): 1 = runaway caller (docs/alerting.md#runaway-caller).", "agent", "caller")
	dStorm      = desc("caller_retry_storm", "Verdict, flagged callers only (top-k): 1 = retry storm for reason (docs/alerting.md#retry-storm).", "agent", "caller", "reason")
	dStormShare = desc("caller_retry_storm_share", "Flagged callers only: share of the caller's retries that were early or carried a fresh id.", "agent", "caller", "reason")
	dGwPairs    = desc("gateway_pairs", "Requests seen by both an agent and a gateway in the gateway window.", "agent")
	dGwMangled  = desc("gateway_mangled_pairs", "Of those, pairs with a different status or a stripped body.", "agent")
	dGwShare    = desc("gateway_mangled_ratio", "Mangled pairs / pairs.", "agent")
	dGwVerdict  = desc("gateway_mangling", "Verdict: 1 when a gateway rewrites the agent's replies (docs/alerting.md#gateway-mangling).", "agent")
	dGwRewrite  = desc("gateway_rewrites", "Mangled pairs by agent status and gateway status (top 5 per agent).", "agent", "agent_status", "gateway_status")
	dDeadLetter = desc("dead_letter_per_second", "Messages dead-lettered per second in the current window (outcomes_1m), by reason.", "reason")
	dAccepted   = desc("accepted_per_second", "Messages accepted into errors per second in the current window (outcomes_1m).")
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil)
}

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer, staleAfter time.Duration, clock func() time.Time) *Metrics {
	if clock == nil {
		clock = time.Now
	}
	m := &Metrics{
		staleAfter: staleAfter,
		clock:      clock,
		started:    clock(),
		evalDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "evaluation_duration_seconds",
			Help:    "Duration of one evaluation (all queries and the verdicts).",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		evaluations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "evaluations_total",
			Help: "Evaluations by result (success, failure).",
		}, []string{"result"}),
		queryErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "query_errors_total",
			Help: "Failed ClickHouse queries by query name.",
		}, []string{"query"}),
		queryRows: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "query_rows_read",
			Help: "Rows ClickHouse read for the latest run of each query.",
		}, []string{"query"}),
		queryTime: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "query_duration_seconds",
			Help: "Duration of the latest run of each query.",
		}, []string{"query"}),
		incidentOps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "incident_writes_total",
			Help: "Evaluations whose episodes were recorded in the incidents table, by result (success, failure); none with --incidents.enabled=false.",
		}, []string{"result"}),
	}
	for _, r := range []string{"success", "failure"} {
		m.evaluations.WithLabelValues(r)
	}
	for _, q := range QueryNames {
		m.queryErrors.WithLabelValues(q)
	}
	reg.MustRegister(m, m.evalDuration, m.evaluations, m.queryErrors, m.queryRows, m.queryTime, m.incidentOps)
	return m
}

// Links are the base URLs that alert annotations build their links from.
// They are configuration, exported whether or not the verdicts are fresh.
type Links struct {
	GrafanaURL string // Grafana with errtrail's dashboards
	LookupURL  string // errtrail's support lookup page
}

// SetLinks sets the exported links.
func (m *Metrics) SetLinks(l Links) {
	m.mu.Lock()
	m.links = l
	m.mu.Unlock()
}

// Observe records the outcome of one evaluation: v is nil when it failed.
func (m *Metrics) Observe(v *Verdicts, took time.Duration) {
	m.evalDuration.Observe(took.Seconds())
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evaluated = true
	if v == nil {
		m.lastTry = false
		m.evaluations.WithLabelValues("failure").Inc()
		return
	}
	m.lastTry = true
	m.latest = v
	m.lastOK = m.clock()
	m.evaluations.WithLabelValues("success").Inc()
}

// IncidentWrite records the outcome of one evaluation's incident write.
func (m *Metrics) IncidentWrite(err error) {
	if err != nil {
		m.incidentOps.WithLabelValues("failure").Inc()
		return
	}
	m.incidentOps.WithLabelValues("success").Inc()
}

// QueryDone records one query's cost or failure.
func (m *Metrics) QueryDone(name string, rows uint64, took time.Duration, err error) {
	if err != nil {
		m.queryErrors.WithLabelValues(name).Inc()
		return
	}
	m.queryRows.WithLabelValues(name).Set(float64(rows))
	m.queryTime.WithLabelValues(name).Set(took.Seconds())
}

// Fresh reports whether the verdicts are fresh enough to be exported, and the
// time of the latest successful evaluation.
func (m *Metrics) Fresh() (bool, time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.latest != nil && m.clock().Sub(m.lastOK) <= m.staleAfter, m.lastOK
}

// Describe implements prometheus.Collector. The verdict families are
// described so the registry checks their names; their label sets vary.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dLinks, dUp, dDataAge, dLastOK, dStale, dWindow, dHistory, dHistoryOK,
		dAgentsSeen, dAgentsCap, dLimitUndec, dUndecided, dErrRate, dCallers,
		dOvRate, dOvBase, dOvCallers, dOverloaded, dQuota, dQuotaAll, dQCallers, dQRising, dLimitLow,
		dUntypedR, dUntyped, dRunawayN, dStormN, dScore, dRunaway, dStorm, dStormShare,
		dGwPairs, dGwMangled, dGwShare, dGwVerdict, dGwRewrite, dDeadLetter, dAccepted} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	v, lastOK, lastTry, evaluated, links := m.latest, m.lastOK, m.lastTry, m.evaluated, m.links
	m.mu.Unlock()
	now := m.clock()

	gauge(ch, dLinks, 1, links.GrafanaURL, links.LookupURL)

	up := 0.0
	if evaluated && lastTry {
		up = 1
	}
	gauge(ch, dUp, up)
	age := now.Sub(m.started)
	last := 0.0
	if v != nil {
		age = now.Sub(lastOK)
		last = float64(lastOK.UnixNano()) / 1e9
	}
	gauge(ch, dDataAge, age.Seconds())
	gauge(ch, dLastOK, last)
	stale := v == nil || age > m.staleAfter
	gauge(ch, dStale, b2f(stale))
	if stale {
		return // unknown is absent, never zero
	}

	gauge(ch, dWindow, v.WindowSeconds)
	gauge(ch, dHistory, v.HistorySeconds)
	gauge(ch, dHistoryOK, b2f(v.HistorySufficient))
	gauge(ch, dAgentsSeen, float64(v.AgentsSeen))
	gauge(ch, dAgentsCap, float64(v.AgentsCapped))
	for i := range v.Agents {
		a := &v.Agents[i]
		gauge(ch, dErrRate, a.ErrorsPerSec, a.Agent)
		gauge(ch, dCallers, float64(a.ActiveCallers), a.Agent)
		gauge(ch, dOvRate, a.OverloadPerSec, a.Agent)
		gauge(ch, dOvBase, a.OverloadBaselinePerSec, a.Agent)
		gauge(ch, dOvCallers, float64(a.OverloadCallers), a.Agent)
		gauge(ch, dOverloaded, b2f(a.Overloaded), a.Agent)
		gauge(ch, dQuotaAll, a.QuotaPerSec, a.Agent)
		for _, l := range a.QuotaByLimit {
			gauge(ch, dQuota, l.PerSec, a.Agent, l.Limit)
		}
		gauge(ch, dQCallers, float64(a.QuotaCallers), a.Agent)
		gauge(ch, dQRising, float64(a.QuotaRisingCallers), a.Agent)
		gauge(ch, dLimitLow, b2f(a.LimitTooLow), a.Agent)
		gauge(ch, dLimitUndec, b2f(a.LimitUndecided), a.Agent)
		gauge(ch, dUndecided, float64(a.UndecidedCallers), a.Agent)
		if !math.IsNaN(a.UntypedRatio) {
			gauge(ch, dUntypedR, a.UntypedRatio, a.Agent)
		}
		gauge(ch, dUntyped, b2f(a.Untyped), a.Agent)
		gauge(ch, dRunawayN, float64(a.RunawayCallers), a.Agent)
		gauge(ch, dStormN, float64(a.RetryStormCallers), a.Agent)
		if g := a.Gateway; g != nil {
			gauge(ch, dGwPairs, float64(g.Pairs), a.Agent)
			gauge(ch, dGwMangled, float64(g.Mangled), a.Agent)
			gauge(ch, dGwShare, g.Share, a.Agent)
			gauge(ch, dGwVerdict, b2f(g.Mangling), a.Agent)
			for i, r := range g.Rewrites {
				if i == 5 {
					break
				}
				gauge(ch, dGwRewrite, float64(r.N), a.Agent, strconv.Itoa(r.AgentStatus), strconv.Itoa(r.GatewayStatus))
			}
		}
	}
	for _, c := range v.Callers {
		gauge(ch, dScore, c.Score, c.Agent, c.Caller, c.By)
		gauge(ch, dRunaway, b2f(c.Runaway), c.Agent, c.Caller)
	}
	for _, s := range v.RetryStorms {
		gauge(ch, dStorm, 1, s.Agent, s.Caller, s.Reason)
		gauge(ch, dStormShare, s.Share, s.Agent, s.Caller, s.Reason)
	}
	for _, d := range v.DeadLetters {
		gauge(ch, dDeadLetter, d.PerSec, d.Reason)
	}
	gauge(ch, dAccepted, v.AcceptedPerSec)
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
