package alerter_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/alerter"
)

// TestRestrictedGatherMatchesFull: a Gather restricted to one agent
// (Source.Agents, what the support lookup's story uses) gives that agent
// the same verdicts as a full Gather: the same AgentVerdict, the same
// runaway callers and retry storms, the same history. Checked for every
// agent of the other integration tests' stories, at two moments and with
// the configurations of TestReducedMatchesReference; and the restricted
// read must not report any other agent.
func TestRestrictedGatherMatchesFull(t *testing.T) {
	conn := openCH(t)
	opts := freshNamedDB(t, conn, "errtrail_alerter_restricted")
	now := time.Now()
	seed(t, conn, opts, now)
	// A cold start on one agent while the others have an hour: the history
	// start is every agent's, so a restricted read must still see it.
	insert(t, conn, opts, coldStartRows(now, 40*time.Minute))
	var rows []row
	for i := 0; i < 4; i++ {
		rows = append(rows, steady(now, quotaRow, "late-agent", fmt.Sprintf("c%d", i), 3+i, 5*time.Minute, 0)...)
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
			cfg.TopK = 1000 // the cut across agents is not the restriction's to reproduce
			for _, at := range []time.Time{now, now.Add(25 * time.Second)} {
				full, err := (&alerter.Source{Conn: conn, Database: opts.Database}).Gather(context.Background(), &cfg, at)
				if err != nil {
					t.Fatal(err)
				}
				fv := alerter.Evaluate(&cfg, full, nil)
				if len(fv.Agents) < 8 {
					t.Fatalf("only %d agents in the full read; the comparison proves little", len(fv.Agents))
				}
				for _, want := range fv.Agents {
					src := &alerter.Source{Conn: conn, Database: opts.Database, Agents: []string{want.Agent}}
					in, err := src.Gather(context.Background(), &cfg, at)
					if err != nil {
						t.Fatal(err)
					}
					v := alerter.Evaluate(&cfg, in, nil)
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

// TestRestrictedGatherRefusesUnsafeNames: an agent name that could end a
// quoted literal is refused before any query runs.
func TestRestrictedGatherRefusesUnsafeNames(t *testing.T) {
	cfg := alerter.DefaultConfig()
	for _, name := range []string{"a'b", `a\b`, "a b", strings.Repeat("a", 129), "a\nb"} {
		src := &alerter.Source{Agents: []string{name}} // no Conn: must fail before using it
		if _, err := src.Gather(context.Background(), &cfg, time.Now()); err == nil {
			t.Errorf("Gather with agent %q: no error", name)
		} else if strings.Contains(err.Error(), name) {
			t.Errorf("the error quotes the name: %v", err)
		}
	}
	src := &alerter.Source{Agents: []string{"a"}, Reference: true}
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
