package alerter

import (
	"context"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/schema"
)

// Recorder writes the verdicts' episodes into the incidents table as the
// alerter evaluates (docs/alerting.md, "Incidents"). At every evaluation it
// reads the open episodes (so an alerter restarted mid-episode, or a second
// alerter, continues the episode another run opened instead of opening its
// own), then writes one row per episode that the evaluation continued,
// opened or ended. An episode's identity is (kind, agent, caller, reason,
// start); the table keeps the latest write of each (ReplacingMergeTree by
// version, the evaluation time in milliseconds).
//
// The one case that can still give two rows: two alerters that find the
// same new verdict held long enough in the same instant, neither seeing the
// other's write, and whose first evaluations fell in different seconds.
// Alerters evaluate on their own ticks, so this takes their ticks to
// coincide to within one evaluation's query time.
//
// A Recorder is not safe for concurrent use (Runner.Once calls it in turn).
type Recorder struct {
	Conn     driver.Conn
	Database string // default schema.DefaultDatabase
	// Writer names this alerter in the rows it writes (the host name by
	// default in cmd/alerter); no credential.
	Writer string
	// Interval is the time between evaluations (Runner.Interval; default
	// 10 s): the recorder's memory of an episode another alerter ended
	// carries it on only across evaluations at most 1.5 Interval apart.
	Interval time.Duration
	// Hold overrides IncidentHold, Keep IncidentKeep (tests).
	Hold, Keep map[incidents.Kind]time.Duration

	mu      sync.Mutex
	mine    map[incidents.Key]incidents.Incident
	pending map[incidents.Key]time.Time
	marked  time.Time // the latest minute noted in alerter_minutes
}

// Record writes the episodes of v. Verdicts of an evaluation that failed
// are not passed: while the alerter cannot read ClickHouse, its episodes
// stay open at their last evaluation.
func (r *Recorder) Record(ctx context.Context, cfg *Config, v *Verdicts) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mine == nil {
		r.mine = map[incidents.Key]incidents.Incident{}
		r.pending = map[incidents.Key]time.Time{}
	}
	db := r.Database
	if db == "" {
		db = schema.DefaultDatabase
	}
	open, err := incidents.Read(ctx, r.Conn, db, incidents.Filter{OpenOnly: true, Limit: 1 << 20})
	if err != nil {
		return err
	}
	stored := make(map[incidents.Key]incidents.Incident, len(open))
	for _, i := range open {
		// Read returns the latest start first: a race that left two open
		// episodes of one key continues the earliest.
		stored[i.Key()] = i
	}
	hold := r.Hold
	if hold == nil {
		hold = IncidentHold
	}
	keep := r.Keep
	if keep == nil {
		keep = IncidentKeep
	}
	interval := r.Interval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	rows := episodeStep(v.At, interval*3/2, r.Writer, hold, keep, observe(cfg, v), stored, r.mine, r.pending)
	if len(rows) > 0 {
		if err := incidents.Write(ctx, r.Conn, db, rows); err != nil {
			return err
		}
	}
	// Once a minute: this alerter was recording, so a reader can tell "no
	// episode" from "nobody looking" (incidents.At).
	if minute := v.At.UTC().Truncate(time.Minute); !minute.Equal(r.marked) {
		if err := incidents.MarkRecording(ctx, r.Conn, db, r.Writer, v.At); err != nil {
			return err
		}
		r.marked = minute
	}
	return nil
}
