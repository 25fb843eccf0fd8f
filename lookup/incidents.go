package lookup

import (
	"context"
	"errors"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/errtrail/errtrail/incidents"
)

// Where a story's verdicts come from (Context.VerdictSource).
const (
	// VerdictsRecorded: read from the episodes the alerter recorded in the
	// incidents table (docs/alerting.md, "Incidents"): what on-call was told
	// then, read in two point reads.
	VerdictsRecorded = "incidents"
	// VerdictsRecomputed: no alerter was recording incidents at that moment
	// (or the database predates the incidents table), so the verdicts were
	// computed afresh from the stored errors with the alerter's code.
	VerdictsRecomputed = "recomputed"
)

// errUnknownTable is ClickHouse's code for a table that does not exist.
const errUnknownTable = 60

// recordedVerdicts fills c's verdicts from the incidents at the record's
// second. It returns false, without error, when no alerter was recording
// in that minute or the database has no incidents table: the caller then
// recomputes them.
func (f *Finder) recordedVerdicts(ctx context.Context, r *Row, c *Context) (bool, error) {
	at := time.Unix(r.ObservedAt.Unix(), 0).UTC()
	c.VerdictAt = at
	conn, done := f.step("incidents")
	m, err := incidents.At(ctx, conn, f.db(), r.Agent, at)
	var ex *clickhouse.Exception
	if errors.As(err, &ex) && ex.Code == errUnknownTable {
		err = nil
		m = incidents.Moment{}
	}
	done(err)
	if err != nil || !m.Recording {
		return false, err
	}
	verdictsOf(c, r, m)
	// The alerter judges retry storms at every evaluation.
	c.RetryStormChecked = true
	c.VerdictSource = VerdictsRecorded
	c.verdictsOK = true
	return true, nil
}

// verdictsOf fills c's verdicts about r from the episodes of r's agent
// under way at r's moment, recorded or recomputed alike.
func verdictsOf(c *Context, r *Row, m incidents.Moment) {
	for _, i := range m.Incidents {
		switch i.Kind {
		case incidents.Overload:
			c.AgentOverloaded = true
		case incidents.LimitTooLow:
			c.LimitTooLow = true
		case incidents.Undecided:
			c.Undecided = true
		case incidents.Runaway:
			c.CallerRunaway = c.CallerRunaway || i.Caller == r.Caller
		case incidents.RetryStorm:
			if i.Caller == r.Caller {
				c.RetryStorm = true
				c.RetryStormReasons = append(c.RetryStormReasons, i.Reason)
			}
		}
	}
}
