package alerter_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/alerter"
)

// TestRestrictedGatherMatchesFull: a Gather restricted to one agent
// (Reader.Agents, what the support lookup's story uses) gives that agent
// the same verdicts as a full Gather: the same AgentVerdict, the same
// runaway callers and retry storms, the same history. Checked for every
// agent of the other integration tests' stories, at two moments and with
// the configurations of TestReducedMatchesReference; and the restricted
// read must not report any other agent.
func TestRestrictedGatherMatchesFull(t *testing.T) {
	conn := openCH(t)
	opts := freshUniqueDB(t, conn, "errtrail_alerter_restricted")
	now := time.Now()
	seed(t, conn, opts, now)
	// A cold start on one agent while the others have an hour: the history
	// start is every agent's, so a restricted read must still see it.
	insert(t, conn, opts, coldStartRows(now, 40*time.Minute))
	var rows []row
	for i := 0; i < 4; i++ {
		rows = append(rows, steady(now, quotaRow, "late-agent", fmt.Sprintf("c%d", i), 3+i, 5*time.Minute, 0)...)
	}
	// One reply an hour and five minutes ago, alone in the first baseline
	// bucket of the moment probeAt: there the history start is found by
	// reading that bucket alone, at now by reading the whole baseline
	// (its first bucket is empty).
	t0 := now.Add(-65 * time.Minute).Truncate(time.Minute).Add(2 * time.Second)
	probeAt := t0.Truncate(time.Minute).Add(time.Hour + time.Minute + 5*time.Second)
	rows = append(rows, with(quotaRow, "agent", "ancient", "caller", "c1", "observed_at_ms", t0.UnixMilli()))
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
			cfg.TopK = 1000 // the cut across agents is not the restriction's to reproduce
			for mi, at := range []time.Time{now, now.Add(25 * time.Second), probeAt} {
				full, err := (&alerter.Reader{Conn: conn, Database: opts.Database}).Gather(context.Background(), &cfg, at)
				if err != nil {
					t.Fatal(err)
				}
				fv := alerter.Evaluate(&cfg, full, nil)
				if need := map[int]int{0: 8, 1: 8, 2: 3}[mi]; len(fv.Agents) < need {
					t.Fatalf("only %d agents in the full read at %s; the comparison proves little", len(fv.Agents), at.Format("15:04:05"))
				}
				for _, want := range fv.Agents {
					var histories int // history reads: 1 when the first bucket had a reply, 2 when not
					src := &alerter.Reader{Conn: conn, Database: opts.Database, Agents: []string{want.Agent},
						Observe: func(name string, _ uint64, _ time.Duration, _ error) {
							if name == alerter.QHistory {
								histories++
							}
						}}
					in, err := src.Gather(context.Background(), &cfg, at)
					if err != nil {
						t.Fatal(err)
					}
					if wantReads := map[bool]int{true: 1, false: 2}[at.Equal(probeAt)]; histories != wantReads {
						t.Errorf("%s at %s: %d history reads, want %d", tc.name, at.Format("15:04:05"), histories, wantReads)
					}
					v := alerter.Evaluate(&cfg, in, nil)
					checkCountsOnly(t, conn, opts.Database, &cfg, at, tc.name, want, fv)
					var got *alerter.AgentVerdict
					for i := range v.Agents {
						if v.Agents[i].Agent != want.Agent {
							t.Errorf("%s: restricted to %s, the read reports agent %s", tc.name, want.Agent, v.Agents[i].Agent)
							continue
						}
						got = &v.Agents[i]
					}
					if got == nil {
						t.Errorf("%s at %s: restricted read has no verdict for %s", tc.name, at.Format("15:04:05"), want.Agent)
						continue
					}
					if d := diffValue("AgentVerdict", reflect.ValueOf(got), reflect.ValueOf(&want)); d != "" {
						t.Errorf("%s at %s, agent %s: %s", tc.name, at.Format("15:04:05"), want.Agent, d)
					}
					if v.HistorySeconds != fv.HistorySeconds || v.HistorySufficient != fv.HistorySufficient {
						t.Errorf("%s, agent %s: history %v/%v; full read %v/%v", tc.name, want.Agent,
							v.HistorySeconds, v.HistorySufficient, fv.HistorySeconds, fv.HistorySufficient)
					}
					if g, w := callersOf(v, want.Agent), callersOf(fv, want.Agent); g != w {
						t.Errorf("%s, agent %s: runaway callers and storms\n%s\nfull read\n%s", tc.name, want.Agent, g, w)
					}
				}
			}
		})
	}
}

// checkCountsOnly: a restricted Gather of the counts step alone
// (Reader.Steps, what the story runs) gives the agent the same overload,
// limit-too-low and runaway verdicts, every field of its AgentVerdict but
// those of the steps left out (RetryStormCallers, Gateway), and the same
// history as a full Gather; it reads no retry storm.
func checkCountsOnly(t *testing.T, conn driver.Conn, db string, cfg *alerter.Config, at time.Time, name string,
	want alerter.AgentVerdict, fv *alerter.Verdicts) {
	t.Helper()
	src := &alerter.Reader{Conn: conn, Database: db, Agents: []string{want.Agent}, Steps: []string{alerter.StepCounts}}
	in, err := src.Gather(context.Background(), cfg, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Retries)+len(in.Gateways)+len(in.DeadLetters) != 0 || in.Accepted != 0 {
		t.Errorf("%s, agent %s: the counts step alone read retries, gateways or outcomes", name, want.Agent)
	}
	v := alerter.Evaluate(cfg, in, nil)
	var got *alerter.AgentVerdict
	for i := range v.Agents {
		if v.Agents[i].Agent == want.Agent {
			got = &v.Agents[i]
		}
	}
	if got == nil {
		t.Errorf("%s at %s: counts-only read has no verdict for %s", name, at.Format("15:04:05"), want.Agent)
		return
	}
	w := want
	w.RetryStormCallers, w.Gateway = 0, nil
	if d := diffValue("AgentVerdict", reflect.ValueOf(got), reflect.ValueOf(&w)); d != "" {
		t.Errorf("%s at %s, agent %s, counts only: %s", name, at.Format("15:04:05"), want.Agent, d)
	}
	if v.HistorySeconds != fv.HistorySeconds || v.HistorySufficient != fv.HistorySufficient {
		t.Errorf("%s, agent %s, counts only: history %v; full read %v", name, want.Agent, v.HistorySeconds, fv.HistorySeconds)
	}
	var g, f strings.Builder
	for _, c := range v.Callers {
		if c.Agent == want.Agent {
			fmt.Fprintf(&g, "runaway %+v\n", c)
		}
	}
	for _, c := range fv.Callers {
		if c.Agent == want.Agent {
			fmt.Fprintf(&f, "runaway %+v\n", c)
		}
	}
	if g.String() != f.String() {
		t.Errorf("%s, agent %s, counts only: runaway callers\n%s\nfull read\n%s", name, want.Agent, g.String(), f.String())
	}
	if len(v.RetryStorms) != 0 {
		t.Errorf("%s, agent %s, counts only: retry storms %+v", name, want.Agent, v.RetryStorms)
	}
}

// TestRestrictedGatherRefusesUnsafeNames: an agent name that could end a
// quoted literal is refused before any query runs.
func TestRestrictedGatherRefusesUnsafeNames(t *testing.T) {
	cfg := alerter.DefaultConfig()
	for _, name := range []string{"a'b", `a\b`, "a b", strings.Repeat("a", 129), "a\nb"} {
		src := &alerter.Reader{Agents: []string{name}} // no Conn: must fail before using it
		if _, err := src.Gather(context.Background(), &cfg, time.Now()); err == nil {
			t.Errorf("Gather with agent %q: no error", name)
		} else if strings.Contains(err.Error(), name) {
			t.Errorf("the error quotes the name: %v", err)
		}
	}
	if _, err := (&alerter.Reader{Steps: []string{"counts", "everything"}}).Gather(context.Background(), &cfg, time.Now()); err == nil {
		t.Error("Gather with an unknown step: no error")
	}
	src := &alerter.Reader{Agents: []string{"a"}, Reference: true}
	if _, err := src.Gather(context.Background(), &cfg, time.Now()); err == nil {
		t.Error("Agents with Reference: no error")
	}
}

// callersOf renders the agent's runaway callers and retry storms.
func callersOf(v *alerter.Verdicts, agent string) string {
	var b strings.Builder
	for _, c := range v.Callers {
		if c.Agent == agent {
			fmt.Fprintf(&b, "runaway %+v\n", c)
		}
	}
	for _, r := range v.RetryStorms {
		if r.Agent == agent {
			fmt.Fprintf(&b, "storm %+v\n", r)
		}
	}
	return b.String()
}

// recordingConn is the real connection, remembering each query's SQL text
// and the values bound to it.
type recordingConn struct {
	driver.Conn
	mu   sync.Mutex
	sqls []string
	args [][]any
}

func (c *recordingConn) Query(ctx context.Context, sql string, args ...any) (driver.Rows, error) {
	c.mu.Lock()
	c.sqls = append(c.sqls, sql)
	c.args = append(c.args, args)
	c.mu.Unlock()
	return c.Conn.Query(ctx, sql, args...)
}

// TestRestrictedGatherBindsAgentNames: the agent names of Reader.Agents
// reach ClickHouse as bound values, never as part of the SQL text that
// fmt formats; the restricted read still selects those agents, both of
// them, and no other.
func TestRestrictedGatherBindsAgentNames(t *testing.T) {
	conn := openCH(t)
	opts := freshUniqueDB(t, conn, "errtrail_alerter_bind")
	now := time.Now()
	var rows []row
	for _, agent := range []string{"bind-agent-a", "bind-agent-b", "bind-agent-other"} {
		rows = append(rows, steady(now, quotaRow, agent, "c1", 4, 5*time.Minute, 0)...)
	}
	insert(t, conn, opts, rows)
	rc := &recordingConn{Conn: conn}
	cfg := alerter.DefaultConfig()
	src := &alerter.Reader{Conn: rc, Database: opts.Database, Agents: []string{"bind-agent-a", "bind-agent-b"}}
	in, err := src.Gather(context.Background(), &cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, w := range in.Window {
		seen[w.Agent] = true
	}
	if !seen["bind-agent-a"] || !seen["bind-agent-b"] || len(seen) != 2 {
		t.Errorf("window agents %v; want bind-agent-a and bind-agent-b only", seen)
	}
	bound := 0
	for i, sql := range rc.sqls {
		if strings.Contains(sql, "bind-agent") {
			t.Errorf("query %d has an agent name in its text:\n%s", i, sql)
		}
		if strings.Contains(sql, "@agents") {
			if len(rc.args[i]) == 0 {
				t.Errorf("query %d names @agents but binds nothing", i)
			}
			bound++
		}
	}
	if len(rc.sqls) == 0 || bound == 0 {
		t.Errorf("%d queries, %d of them restricted by @agents; want the restriction bound", len(rc.sqls), bound)
	}
}
