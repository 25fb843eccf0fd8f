package alerter_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/errtrail/errtrail/alerter"
)

// TestReducedMatchesReference: the reads that Gather reduces in ClickHouse
// (the baseline summarized per agent, the buckets of only the callers whose
// own baseline can matter, the retry statistics of only the callers that can
// be flagged) give the same verdicts as the reference reads
// (Reader.Reference: every bucket of every caller, every caller's retries),
// on the stories of the other integration tests and on callers made to sit
// on each side of every threshold that decides what is read.
func TestReducedMatchesReference(t *testing.T) {
	conn := openCH(t)
	opts := freshUniqueDB(t, conn, "errtrail_alerter_reduced")
	now := time.Now()
	seed(t, conn, opts, now)
	insert(t, conn, opts, coldStartRows(now, 40*time.Minute))

	ov := row{"kind": "overload", "http_status": 503, "reason": "AGENT_OVERLOADED", "retry_after_ms": 5000}
	var rows []row
	add := func(rs []row) { rows = append(rows, rs...) }
	// "mixed": callers on either side of the thresholds that decide whose
	// buckets are read (4 and 5 errors a minute, 4 and 5 quota rejections),
	// with and without a past; callers with a past and nothing now (idle).
	for i, perMin := range []int{1, 4, 5, 6, 29, 30, 31} {
		add(steady(now, quotaRow, "mixed", fmt.Sprintf("past-%d", i), 2, 50*time.Minute, 2*time.Minute))
		add(steady(now, quotaRow, "mixed", fmt.Sprintf("past-%d", i), perMin, time.Minute, 0))
		add(steady(now, row{"kind": "internal", "http_status": 500, "typed": 0}, "mixed", fmt.Sprintf("new-%d", i), perMin, time.Minute, 0))
	}
	for i := 0; i < 12; i++ {
		add(steady(now, quotaRow, "mixed", fmt.Sprintf("idle-%d", i), 1+i%3, 45*time.Minute, 5*time.Minute))
	}
	// "sleepy": an agent whose callers all had errors before, none now.
	for i := 0; i < 4; i++ {
		add(steady(now, with(ov, "source_kind", "gateway"), "sleepy", fmt.Sprintf("c%d", i), 3, 30*time.Minute, 10*time.Minute))
	}
	// "dual": overload seen by the agent and by its gateway, differently
	// many per caller and minute (the larger kind counts), and one caller
	// seen by the gateway alone.
	for i := 0; i < 5; i++ {
		c := fmt.Sprintf("c%d", i)
		add(steady(now, ov, "dual", c, 2+i, 40*time.Minute, 2*time.Minute))
		add(steady(now, with(ov, "source_kind", "gateway"), "dual", c, 4-i%3, 40*time.Minute, 2*time.Minute))
		add(steady(now, ov, "dual", c, 6, time.Minute, 0))
	}
	add(steady(now, with(ov, "source_kind", "gateway"), "dual", "gw-only", 3, 20*time.Minute, 0))
	// Retries just under and just over the counts a verdict needs: 9 and
	// 12 early retries, 9 and 12 rotated ids.
	for _, n := range []int{9, 12} {
		for m := 0; m < n; m++ {
			for a := 1; a <= 2; a++ {
				add([]row{with(quotaRow, "agent", "retry-edge", "caller", fmt.Sprintf("early-%d", n),
					"message_id", fmt.Sprintf("e%d-%d", n, m), "attempt", a,
					"observed_at_ms", now.Add(-time.Duration(10+15*m)*time.Second).UnixMilli()+int64(a)*300)})
			}
			add([]row{with(quotaRow, "agent", "retry-edge", "caller", fmt.Sprintf("rotated-%d", n),
				"message_id", fmt.Sprintf("r%d-%d", n, m), "idempotency_key_hash", uint64(9000+100*n+m), "attempt", 2,
				"observed_at_ms", now.Add(-time.Duration(10+15*m)*time.Second).UnixMilli())})
		}
	}
	insert(t, conn, opts, rows)

	for _, tc := range []struct {
		name string
		cfg  func(*alerter.Config)
	}{
		{"defaults", func(*alerter.Config) {}},
		{"raw-10s-buckets", func(c *alerter.Config) { c.Bucket = 10 * time.Second }},
		{"low-thresholds", func(c *alerter.Config) {
			c.Runaway.RiseMinPerMin, c.Runaway.MinPerMin, c.LimitTooLow.MinPerMin = 2, 3, 1
			c.Retry.MinEarly, c.Retry.MinRotated = 1, 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := alerter.DefaultConfig()
			tc.cfg(&cfg)
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			for _, at := range []time.Time{now, now.Add(25 * time.Second)} {
				var v [2]*alerter.Verdicts
				var in [2]*alerter.Input
				for i, reference := range []bool{false, true} {
					src := &alerter.Reader{Conn: conn, Database: opts.Database, Reference: reference}
					got, err := src.Gather(context.Background(), &cfg, at)
					if err != nil {
						t.Fatal(err)
					}
					in[i], v[i] = got, alerter.Evaluate(&cfg, got, nil)
				}
				if d := diffVerdicts(v[0], v[1]); d != "" {
					t.Errorf("at %s: reduced and reference verdicts differ: %s", at.Format("15:04:05"), d)
				}
				if in[0].Baseline == nil || len(in[0].Buckets) >= len(in[1].Buckets) {
					t.Errorf("at %s: the reduced read has %d buckets (baseline %v), the reference %d: nothing was reduced",
						at.Format("15:04:05"), len(in[0].Buckets), in[0].Baseline != nil, len(in[1].Buckets))
				}
				if len(in[0].Retries) >= len(in[1].Retries) && tc.name != "low-thresholds" {
					t.Errorf("at %s: %d retry statistics reduced, %d in the reference", at.Format("15:04:05"), len(in[0].Retries), len(in[1].Retries))
				}
				flagged := 0
				for _, a := range v[0].Agents {
					if a.Overloaded || a.LimitTooLow || a.Untyped || a.RunawayCallers > 0 || a.RetryStormCallers > 0 {
						flagged++
					}
				}
				if flagged < 4 {
					t.Errorf("at %s: only %d agents with a verdict; the comparison proves little", at.Format("15:04:05"), flagged)
				}
			}
		})
	}
}

// TestOverloadCacheSeesLateRows: a Reader keeps the agents' overload per
// baseline bucket between evaluations; rows that arrive late in a past
// bucket (a new agent, more overload, a second observer kind) and the
// baseline moving on a minute are seen as the reference read sees them.
func TestOverloadCacheSeesLateRows(t *testing.T) {
	conn := openCH(t)
	opts := freshUniqueDB(t, conn, "errtrail_alerter_reduced_cache")
	now := time.Now()
	ov := row{"kind": "overload", "http_status": 503, "reason": "AGENT_OVERLOADED", "retry_after_ms": 5000}
	var rows []row
	for i := 0; i < 4; i++ {
		rows = append(rows, steady(now, ov, "a", fmt.Sprintf("c%d", i), 2+i, 40*time.Minute, 2*time.Minute)...)
		rows = append(rows, steady(now, with(ov, "source_kind", "gateway"), "b", fmt.Sprintf("c%d", i), 3, 40*time.Minute, 2*time.Minute)...)
		rows = append(rows, steady(now, ov, "b", fmt.Sprintf("c%d", i), 1+i, 40*time.Minute, 2*time.Minute)...)
	}
	insert(t, conn, opts, rows)
	cfg := alerter.DefaultConfig()
	cached := &alerter.Reader{Conn: conn, Database: opts.Database}
	check := func(step string, at time.Time) {
		t.Helper()
		ref := &alerter.Reader{Conn: conn, Database: opts.Database, Reference: true}
		var v [2]*alerter.Verdicts
		for i, src := range []*alerter.Reader{cached, ref} {
			in, err := src.Gather(context.Background(), &cfg, at)
			if err != nil {
				t.Fatal(err)
			}
			v[i] = alerter.Evaluate(&cfg, in, nil)
		}
		if d := diffVerdicts(v[0], v[1]); d != "" {
			t.Errorf("%s: cached and reference verdicts differ: %s", step, d)
		}
	}
	check("first", now)
	check("again", now)
	// Late rows in every past minute (a median moves only when most
	// buckets do): more for a, a gateway that reports more than a itself,
	// a new agent; then the baseline moves on.
	rows = steady(now, ov, "a", "c1", 6, 35*time.Minute, 3*time.Minute)
	rows = append(rows, steady(now, with(ov, "source_kind", "gateway"), "a", "c2", 9, 35*time.Minute, 3*time.Minute)...)
	rows = append(rows, steady(now, ov, "late", "c9", 4, 35*time.Minute, 3*time.Minute)...)
	insert(t, conn, opts, rows)
	check("late rows", now)
	check("a minute on", now.Add(70*time.Second))
}
