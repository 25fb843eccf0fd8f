package alerter

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/prometheus/client_golang/prometheus"
)

func exported(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			switch {
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

func TestStaleVerdictsVanish(t *testing.T) {
	clock := now
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, time.Minute, func() time.Time { return clock })

	got := exported(t, reg)
	if got["errtrail_alerter_clickhouse_up"] != 0 || got["errtrail_alerter_stale"] != 1 {
		t.Errorf("before any evaluation: up %v stale %v; want 0, 1", got["errtrail_alerter_clickhouse_up"], got["errtrail_alerter_stale"])
	}

	in := &Input{}
	for _, c := range callers(3) {
		current(in, "research", c, ov(30))
	}
	cfg := DefaultConfig()
	in.Now = now
	m.Observe(Evaluate(&cfg, in, nil), 10*time.Millisecond)
	got = exported(t, reg)
	if got["errtrail_alerter_agent_overloaded,agent=research"] != 1 || got["errtrail_alerter_clickhouse_up"] != 1 {
		t.Fatalf("after a good evaluation: %v", got)
	}

	// ClickHouse goes away: the old verdict stays while it is fresh...
	clock = clock.Add(30 * time.Second)
	m.Observe(nil, time.Second)
	got = exported(t, reg)
	if got["errtrail_alerter_clickhouse_up"] != 0 || got["errtrail_alerter_agent_overloaded,agent=research"] != 1 {
		t.Errorf("30 s into an outage: up %v, overloaded %v; want 0, 1 (still fresh)",
			got["errtrail_alerter_clickhouse_up"], got["errtrail_alerter_agent_overloaded,agent=research"])
	}
	// ...and vanishes, never reading as zero, once it is older than staleAfter.
	clock = clock.Add(31 * time.Second)
	got = exported(t, reg)
	for k := range got {
		if strings.HasPrefix(k, "errtrail_alerter_agent_") || strings.HasPrefix(k, "errtrail_alerter_overload") {
			t.Errorf("stale verdict still exported: %s", k)
		}
	}
	if got["errtrail_alerter_stale"] != 1 || got["errtrail_alerter_data_age_seconds"] != 61 {
		t.Errorf("stale %v, data age %v; want 1, 61", got["errtrail_alerter_stale"], got["errtrail_alerter_data_age_seconds"])
	}
	if n := got["errtrail_alerter_evaluations_total,result=failure"]; n != 1 {
		t.Errorf("failures = %v; want 1", n)
	}
}

func TestUnreachableClickHouse(t *testing.T) {
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{"127.0.0.1:1"}, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, time.Minute, nil)
	cfg := DefaultConfig()
	r := &Runner{Config: &cfg, Metrics: m, Interval: time.Second,
		Reader: &Reader{Conn: conn, Observe: m.QueryDone}}
	if _, err := r.Once(context.Background()); err == nil {
		t.Fatal("Once succeeded against a closed port")
	}
	got := exported(t, reg)
	if got["errtrail_alerter_query_errors_total,query=buckets"] != 1 || got["errtrail_alerter_clickhouse_up"] != 0 {
		t.Errorf("query errors %v, up %v; want 1, 0", got["errtrail_alerter_query_errors_total,query=buckets"], got["errtrail_alerter_clickhouse_up"])
	}
	for k := range got {
		if strings.HasPrefix(k, "errtrail_alerter_agent_") {
			t.Errorf("verdict exported without data: %s", k)
		}
	}
}

// The links are configuration: exported before any evaluation and while
// the verdicts are stale, never only with them.
func TestLinksExportedWhenStale(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, time.Minute, func() time.Time { return now })
	m.SetLinks(Links{GrafanaURL: "https://grafana.example.com"})
	got := exported(t, reg)
	if got["errtrail_alerter_stale"] != 1 {
		t.Fatalf("stale = %v; want 1 before any evaluation", got["errtrail_alerter_stale"])
	}
	found := false
	for k, v := range got {
		if strings.HasPrefix(k, "errtrail_alerter_links_info") {
			found = true
			if v != 1 || !strings.Contains(k, "grafana_url=https://grafana.example.com") {
				t.Errorf("%s = %v; want the Grafana URL, value 1", k, v)
			}
		}
	}
	if !found {
		t.Errorf("links_info not exported while stale: %v", got)
	}
}
