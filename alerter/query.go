package alerter

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Query names (values of the query label).
const (
	QBuckets  = "buckets"
	QWindow   = "window"
	QLimits   = "limits"
	QRetries  = "retries"
	QIdemKeys = "idempotency_keys"
	QGateway  = "gateway"
	QOutcomes = "outcomes"
)

// QueryNames lists every query one evaluation runs.
var QueryNames = []string{QBuckets, QWindow, QLimits, QRetries, QIdemKeys, QGateway, QOutcomes}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Source reads an Input from ClickHouse. The SQL runs on ClickHouse 18.16
// (no window functions: sequences are built with groupArray and arraySort)
// and on current releases. Only integers, the validated database name and
// schema constants are formatted into it. Each query has a file of its own:
// counts.go (baseline and window), retries.go, gateway.go, and outcomes here.
type Source struct {
	Conn     driver.Conn
	Database string // default "errtrail"
	// PerBucket reads every baseline bucket of every caller into
	// Input.Buckets: the reference form of the baseline, slow at scale.
	PerBucket bool
	// Observe, if set, is told each query's rows read, duration and error.
	Observe func(name string, rows uint64, took time.Duration, err error)
}

// ValidDatabase reports a database name that cannot be spliced into the
// queries (only plain identifiers can).
func ValidDatabase(db string) error {
	if !identRE.MatchString(db) {
		return fmt.Errorf("alerter: database name %q is not a plain identifier", db)
	}
	return nil
}

// Gather runs the evaluation's queries for the span cfg.SpanAt(now).
func (s *Source) Gather(ctx context.Context, cfg *Config, now time.Time) (*Input, error) {
	db := s.Database
	if db == "" {
		db = "errtrail"
	}
	if err := ValidDatabase(db); err != nil {
		return nil, err
	}
	sp := cfg.SpanAt(now)
	in := &Input{Now: now}
	for _, step := range []func(context.Context, string, *Config, Span, *Input) error{
		s.counts, s.retries, s.gateway, s.outcomes,
	} {
		if err := step(ctx, db, cfg, sp, in); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// outcomes reads the pipeline's accepted and dead-lettered messages in the
// current window (minute rollup; the window is widened to the minute).
func (s *Source) outcomes(ctx context.Context, db string, _ *Config, sp Span, in *Input) error {
	sql := fmt.Sprintf(`SELECT outcome, dl_reason, sum(n)
FROM %s.outcomes_1m
WHERE minute >= toDateTime(%d) AND minute <= toDateTime(%d)
GROUP BY outcome, dl_reason`, db, floorTo(sp.WindowStart, 60), sp.End)
	return s.query(ctx, QOutcomes, sql, func(r driver.Rows) error {
		var outcome, reason string
		var n uint64
		if err := r.Scan(&outcome, &reason, &n); err != nil {
			return err
		}
		if outcome == "accepted" {
			in.Accepted += int64(n)
		} else {
			in.DeadLetters = append(in.DeadLetters, DeadLetterCount{Reason: reason, N: int64(n)})
		}
		return nil
	})
}

func (s *Source) query(ctx context.Context, name, sql string, row func(driver.Rows) error) (err error) {
	var read uint64
	ctx = clickhouse.Context(ctx, clickhouse.WithProgress(func(p *clickhouse.Progress) { read += p.Rows }))
	start := time.Now()
	defer func() {
		if s.Observe != nil {
			s.Observe(name, read, time.Since(start), err)
		}
		if err != nil {
			err = fmt.Errorf("alerter: query %s: %w", name, err)
		}
	}()
	rows, err := s.Conn.Query(ctx, sql)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err = row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
