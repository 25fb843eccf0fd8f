package alerter

import (
	"context"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/schema"
)

// Recomputer computes one agent's verdicts at one second afresh
// (incidents.Recomputer), for the support story of a moment in which no
// alerter recorded incidents: Gather restricted to the agent and to its
// counts step (the overload, runaway and limit-too-low verdicts come from
// it alone, the same as after a full Gather:
// restricted_integration_test.go), plus the retries step when asked, then
// Evaluate without a previous evaluation, so the overload hysteresis is not
// applied (an overload that was clearing then reads as not overloaded).
// It is safe for concurrent use.
type Recomputer struct {
	Conn     driver.Conn
	Database string  // default schema.DefaultDatabase
	Config   *Config // nil: DefaultConfig()
}

// Recompute implements incidents.Recomputer.
func (rc *Recomputer) Recompute(ctx context.Context, q incidents.Recompute) (incidents.Moment, error) {
	var own Config
	if rc.Config != nil {
		own = *rc.Config
	} else {
		own = DefaultConfig()
	}
	// The story wants every verdict of the agent, not the top of a ranking.
	own.TopK, own.TopAgents = 1<<20, 1<<20
	db := rc.Database
	if db == "" {
		db = schema.DefaultDatabase
	}
	steps := []string{StepCounts}
	if q.RetryStorms {
		steps = append(steps, StepRetries)
	}
	src := &Reader{Conn: rc.Conn, Database: db, Agents: []string{q.Agent}, Steps: steps,
		QueryIDPrefix: q.QueryIDPrefix, Observe: q.Observe}
	in, err := src.Gather(ctx, &own, q.At)
	if err != nil {
		return incidents.Moment{}, err
	}
	return momentOf(Evaluate(&own, in, nil), q.Agent, q.At), nil
}

// momentOf is the verdicts of v about agent as the episodes under way at
// at: what the incidents would say had an alerter been recording.
func momentOf(v *Verdicts, agent string, at time.Time) incidents.Moment {
	m := incidents.Moment{Recording: true}
	add := func(kind incidents.Kind, caller, reason string) {
		m.Incidents = append(m.Incidents, incidents.Incident{Kind: kind, Agent: agent, Caller: caller,
			Reason: reason, Start: at, Fired: at, LastSeen: at})
	}
	if !v.HistorySufficient {
		add(incidents.Undecided, "", "")
	}
	for _, a := range v.Agents {
		if a.Agent != agent {
			continue
		}
		if a.Overloaded {
			add(incidents.Overload, "", "")
		}
		if a.LimitTooLow {
			add(incidents.LimitTooLow, "", "")
		}
	}
	for _, c := range v.Callers {
		if c.Agent == agent && c.Runaway {
			add(incidents.Runaway, c.Caller, "")
			m.Incidents[len(m.Incidents)-1].Detail = c.By
		}
	}
	for _, s := range v.RetryStorms {
		if s.Agent == agent {
			add(incidents.RetryStorm, s.Caller, s.Reason)
		}
	}
	return m
}
