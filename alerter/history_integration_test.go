package alerter_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/errtrail/errtrail/alerter"
)

// evaluateAt runs one evaluation of db at now with the default config and
// returns the exported series.
func evaluateAt(t *testing.T, conn driver.Conn, db string, now time.Time) map[string]float64 {
	t.Helper()
	cfg := alerter.DefaultConfig()
	return evaluateWith(t, conn, db, now, &cfg)
}

// evaluateWith is evaluateAt with the given config.
func evaluateWith(t *testing.T, conn driver.Conn, db string, now time.Time, cfg *alerter.Config) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := alerter.NewMetrics(reg, time.Minute, nil)
	r := &alerter.Runner{Config: cfg, Metrics: m, Interval: time.Second, Timeout: 30 * time.Second,
		Reader: &alerter.Reader{Conn: conn, Database: db, Observe: m.QueryDone},
		Clock:  func() time.Time { return now }}
	if _, err := r.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	return gathered(t, reg)
}

// steady returns perMin rows a minute of r for caller on agent, in the
// minutes [from, to) before now (to = 0: up to now), spread over each minute.
func steady(now time.Time, r row, agent, caller string, perMin int, from, to time.Duration) []row {
	var out []row
	for m := from; m > to; m -= time.Minute {
		for i := 0; i < perMin; i++ {
			at := now.Add(-m + time.Duration(i)*time.Minute/time.Duration(perMin) + 500*time.Millisecond)
			if !at.Before(now) {
				continue
			}
			out = append(out, with(r, "agent", agent, "caller", caller, "observed_at_ms", at.UnixMilli()))
		}
	}
	return out
}

var quotaRow = row{"kind": "quota", "http_status": 429, "reason": "RATE_LIMIT_EXCEEDED", "limit_name": "per-caller", "retry_after_ms": 5000}

// coldStartRows are the two stories of issue 12 §2, over the last `history`
// of a fresh database:
//   - greedy: caller "greedy" steadily over its quota (40 rejections a
//     minute) from the first minute; its two neighbours get no errors;
//   - spike: neighbours at a steady 8 and 15 rejections a minute, and
//     "spiky" at 10 a minute that goes 30x (300) in the last minute.
func coldStartRows(now time.Time, history time.Duration) []row {
	var rows []row
	rows = append(rows, steady(now, quotaRow, "greedy", "greedy", 40, history, 0)...)
	rows = append(rows, steady(now, quotaRow, "spike", "n1", 8, history, 0)...)
	rows = append(rows, steady(now, quotaRow, "spike", "n2", 15, history, 0)...)
	rows = append(rows, steady(now, quotaRow, "spike", "spiky", 10, history, time.Minute)...)
	rows = append(rows, steady(now, quotaRow, "spike", "spiky", 300, time.Minute, 0)...)
	return rows
}

// TestColdStart: on a fresh database, a verdict claims only what the
// history it has can show. Six minutes in (less than --history.min), the
// greedy caller is undecided (no past, no peers with errors), the spiky one
// is a runaway against its peers, and limit-too-low is undecided, not
// claimed. Twenty minutes in (a third of the baseline hour: a median that counted the missing buckets as zeros would still be 0), both are judged against their own past: the
// greedy caller is its usual self, the spiky one a runaway. Never a
// limit-too-low ticket from the neighbours' steady rejections.
func TestColdStart(t *testing.T) {
	conn := openCH(t)
	now := time.Now()
	for _, tc := range []struct {
		name       string
		history    time.Duration
		sufficient float64
		greedy     map[string]float64
		spiky      string // how spiky is judged
	}{
		{"six-minutes", 6 * time.Minute, 0, map[string]float64{
			`errtrail_alerter_runaway_undecided_callers{agent="greedy"}`: 1,
			`errtrail_alerter_limit_too_low_undecided{agent="greedy"}`:   1,
			`errtrail_alerter_limit_too_low_undecided{agent="spike"}`:    1,
		}, alerter.ByPeers},
		{"twenty-minutes", 20 * time.Minute, 1, map[string]float64{
			`errtrail_alerter_runaway_undecided_callers{agent="greedy"}`: 0,
			`errtrail_alerter_limit_too_low_undecided{agent="greedy"}`:   0,
			`errtrail_alerter_limit_too_low_undecided{agent="spike"}`:    0,
		}, alerter.ByOwnBaseline},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := "errtrail_alerter_cold_" + strings.ReplaceAll(tc.name, "-", "_")
			opts := freshUniqueDB(t, conn, db)
			insert(t, conn, opts, coldStartRows(now, tc.history))
			got := evaluateAt(t, conn, opts.Database, now)
			want := map[string]float64{
				`errtrail_alerter_history_sufficient`:                                                       tc.sufficient,
				`errtrail_alerter_caller_runaway{agent="spike",caller="spiky"}`:                             1,
				`errtrail_alerter_runaway_callers{agent="spike"}`:                                           1,
				`errtrail_alerter_runaway_callers{agent="greedy"}`:                                          0,
				`errtrail_alerter_limit_too_low{agent="spike"}`:                                             0,
				`errtrail_alerter_limit_too_low{agent="greedy"}`:                                            0,
				`errtrail_alerter_caller_runaway_score{agent="spike",by="` + tc.spiky + `",caller="spiky"}`: -1,
			}
			for k, v := range tc.greedy {
				want[k] = v
			}
			for k, w := range want {
				g, ok := got[k]
				if w == -1 { // present, any value >= the runaway factor
					if !ok || g < alerter.DefaultConfig().Runaway.Factor {
						t.Errorf("%s = %v (present %v); want >= %v", k, g, ok, alerter.DefaultConfig().Runaway.Factor)
					}
					continue
				}
				if !ok || g != w {
					t.Errorf("%s = %v (present %v); want %v", k, g, ok, w)
				}
			}
			if h := got["errtrail_alerter_history_seconds"]; h < (tc.history-3*time.Minute).Seconds() || h > tc.history.Seconds() {
				t.Errorf("history_seconds = %v; want about %v", h, tc.history.Seconds())
			}
			for k := range got {
				if strings.HasPrefix(k, "errtrail_alerter_caller_runaway{") && !strings.Contains(k, `caller="spiky"`) {
					t.Errorf("runaway series for another caller: %s", k)
				}
			}
			if t.Failed() {
				logSeries(t, got)
			}
		})
	}
}

// TestLongRetryAfter: a caller that honours the delay it was given and
// retries with the same messageId is never called rotating, whether the
// delay is 1 s, 5 min or 20 min; a caller that rotates its id after a
// 20-minute delay is. A retry after a delay longer than --retry.max-delay
// (2 h) cannot be paired with its first attempt, so rotation is not claimed.
func TestLongRetryAfter(t *testing.T) {
	conn := openCH(t)
	opts := freshUniqueDB(t, conn, "errtrail_alerter_retry_after")
	now := time.Now()
	var rows []row
	add := func(caller string, delay time.Duration, rotate bool) {
		for i := 0; i < 12; i++ {
			retryAt := now.Add(-time.Duration(10+20*i) * time.Second) // 12 retries in the last 4 min
			first := retryAt.Add(-delay - 200*time.Millisecond)
			id := fmt.Sprintf("%s-%d", caller, i)
			second := id
			if rotate {
				second = id + "-again"
			}
			rows = append(rows,
				with(quotaRow, "agent", "slow", "caller", caller, "message_id", id, "attempt", 1,
					"retry_after_ms", delay.Milliseconds(), "observed_at_ms", first.UnixMilli()),
				with(quotaRow, "agent", "slow", "caller", caller, "message_id", second, "attempt", 2,
					"retry_after_ms", delay.Milliseconds(), "observed_at_ms", retryAt.UnixMilli()))
		}
	}
	add("patient-1s", time.Second, false)
	add("patient-5m", 5*time.Minute, false)
	add("patient-20m", 20*time.Minute, false)
	add("patient-2h", 2*time.Hour, false)
	add("rotating-20m", 20*time.Minute, true)
	add("rotating-1s", time.Second, true)
	insert(t, conn, opts, rows)
	got := evaluateAt(t, conn, opts.Database, now)

	storm := func(caller, reason string) string {
		return fmt.Sprintf(`errtrail_alerter_caller_retry_storm{agent="slow",caller=%q,reason=%q}`, caller, reason)
	}
	for _, c := range []string{"rotating-20m", "rotating-1s"} {
		if got[storm(c, alerter.ReasonRotatedMessageID)] != 1 {
			t.Errorf("%s: not flagged for rotating its messageId", c)
		}
	}
	for k := range got {
		if strings.HasPrefix(k, "errtrail_alerter_caller_retry_storm{") && strings.Contains(k, "patient") {
			t.Errorf("a caller that honoured the delay is flagged: %s", k)
		}
	}
	if n := got[`errtrail_alerter_retry_storm_callers{agent="slow"}`]; n != 2 {
		t.Errorf("retry_storm_callers = %v; want 2 (the two rotating callers)", n)
	}
	if t.Failed() {
		logSeries(t, got)
	}
}

// TestCountedOnce: a request reported by both the agent and the gateway in
// front of it is one request in every per-agent count, in the window and in
// the baseline rollup; a gateway that answers for an agent nobody else
// observes still counts.
func TestCountedOnce(t *testing.T) {
	conn := openCH(t)
	opts := freshUniqueDB(t, conn, "errtrail_alerter_counted_once")
	now := time.Now()
	var rows []row
	both := func(at time.Time, id string) {
		rows = append(rows,
			with(quotaRow, "agent", "dual", "caller", "c1", "http_request_id", id, "source_kind", "agent", "observed_at_ms", at.UnixMilli()),
			with(quotaRow, "agent", "dual", "caller", "c1", "http_request_id", id, "source_kind", "gateway", "observed_at_ms", at.UnixMilli()))
	}
	for i := 0; i < 30; i++ { // 30 in the window
		both(now.Add(-time.Duration(1+i)*time.Second), fmt.Sprintf("w-%d", i))
	}
	baselineMinute := now.Truncate(time.Minute).Add(-10 * time.Minute)
	for i := 0; i < 12; i++ { // 12 in one baseline minute
		both(baselineMinute.Add(time.Duration(i)*time.Second), fmt.Sprintf("b-%d", i))
	}
	for i := 0; i < 9; i++ { // a gateway alone in front of "edge"
		rows = append(rows, with(quotaRow, "agent", "edge", "caller", "c1", "source_kind", "gateway",
			"observed_at_ms", now.Add(-time.Duration(1+i)*time.Second).UnixMilli()))
	}
	insert(t, conn, opts, rows)

	cfg := alerter.DefaultConfig()
	src := &alerter.Reader{Conn: conn, Database: opts.Database}
	in, err := src.Gather(context.Background(), &cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	window := map[string]int64{}
	for _, w := range in.Window {
		window[w.Agent] += w.Total
	}
	if window["dual"] != 30 || window["edge"] != 9 {
		t.Errorf("window totals = %v; want dual 30 (not 60), edge 9", window)
	}
	var baseline int64
	for _, b := range in.Buckets {
		if b.Agent == "dual" && b.Start == baselineMinute.Unix() {
			baseline += b.Total
		} else if b.Agent == "dual" {
			t.Errorf("unexpected baseline bucket %+v", b)
		}
	}
	if baseline != 12 {
		t.Errorf("baseline bucket of dual = %d; want 12 (not 24)", baseline)
	}
	var limits int64
	for _, l := range in.Limits {
		if l.Agent == "dual" {
			limits += l.N
		}
	}
	if limits != 30 {
		t.Errorf("quota by limit for dual = %d; want 30", limits)
	}
}

func logSeries(t *testing.T, got map[string]float64) {
	t.Helper()
	for k, v := range got {
		if strings.HasPrefix(k, "errtrail_alerter_") && !strings.Contains(k, "query_") {
			t.Logf("%s %v", k, v)
		}
	}
}
