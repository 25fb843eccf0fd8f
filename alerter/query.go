package alerter

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/schema"
)

// Query names (values of the query label).
const (
	QBuckets  = "buckets"
	QCallers  = "callers"
	QOverload = "overload"
	QWindow   = "window"
	QLimits   = "limits"
	QRetries  = "retries"
	QIdemKeys = "idempotency_keys"
	QGateway  = "gateway"
	QOutcomes = "outcomes"
)

// QHistory names the read of the history start alone (a restricted
// Reader's counts step): is there a reply in the first baseline bucket,
// and only when not, the first bucket with one.
const QHistory = "history"

// QueryNames lists every query one evaluation runs.
var QueryNames = []string{QBuckets, QOverload, QWindow, QLimits, QCallers, QRetries, QIdemKeys, QGateway, QOutcomes}

// The steps of Gather (values of Reader.Steps). Each fills its own part of
// the Input:
//
//   - StepCounts: Buckets, Baseline, Window, Limits. The agents' overload,
//     the callers' runaway and the limit-too-low verdicts, and the history,
//     come from these alone.
//   - StepRetries: Retries (the retry-storm verdicts).
//   - StepGateway: Gateways (gateway mangling).
//   - StepOutcomes: DeadLetters and Accepted (the pipeline's rates).
const (
	StepCounts   = "counts"
	StepRetries  = "retries"
	StepGateway  = "gateway"
	StepOutcomes = "outcomes"
)

// Reader reads an Input from ClickHouse. The SQL runs on ClickHouse 18.16
// (no window functions: sequences are built with groupArray and arraySort)
// and on current releases. Only integers, the validated database name and
// schema constants are formatted into it; the agent names of Agents are
// bound values (Reader.query), checked against the identifier grammar
// first. Each query has a file of its own:
// counts.go (baseline and window), retries.go, gateway.go, and outcomes here.
type Reader struct {
	Conn     driver.Conn
	Database string // default schema.DefaultDatabase
	// Reference reads everything in full, as the alerter did before it
	// reduced its reads in ClickHouse: every baseline bucket of every caller
	// into Input.Buckets (no Input.Baseline), the retry statistics of every
	// caller. The verdicts are the same; it is slow at scale, and there for
	// the tests and measurements that check the reduced reads against it.
	Reference bool
	// QueryIDPrefix, if set, names each query in system.query_log: it runs
	// with query_id QueryIDPrefix + name + "-" + a number that counts the
	// Reader's queries.
	QueryIDPrefix string
	// Agents, if not empty, restricts every per-agent read to these agents
	// (errors and callers_1m are read by their agent prefix), for a caller
	// that needs one agent's verdicts at one moment, such as the support
	// lookup's story of one error. The verdicts of those agents are the
	// same as a full Gather's: the one value Evaluate takes across agents,
	// the first baseline bucket with any reply (HistoryStart), is still
	// read over every agent. Each name must fit redact's identifier grammar
	// (letters, digits, - _ . : / @ + ~ # =, at most 128 bytes; every stored
	// agent does) or be empty; it is then spliced as a quoted literal, which
	// that grammar makes safe. Not with Reference, nor with a threshold of
	// 0 or below (Config.NeedsOwnBaseline): those read every caller's
	// buckets, and Gather refuses them.
	Agents []string
	// Steps, if not empty, are the only steps Gather runs (StepCounts,
	// StepRetries, StepGateway, StepOutcomes); the parts of the Input the
	// others fill stay empty. Evaluate's verdicts that depend only on the
	// steps run are the same as after a full Gather: the support lookup
	// runs StepCounts alone for the overload, runaway and limit-too-low
	// verdicts of one agent (alerter/restricted_integration_test.go).
	Steps []string
	// Observe, if set, is told each query's rows read, duration and error.
	// Gather runs queries at once, but calls Observe for one at a time.
	Observe func(name string, rows uint64, took time.Duration, err error)

	queries   atomic.Int64
	observeMu sync.Mutex

	cacheMu     sync.Mutex
	overloadKey string                   // database and bucket length of overload
	overload    map[int64]overloadBucket // the agents' overload by baseline bucket (agentBuckets)
}

// agentRE is redact's identifier grammar (redact.ID): no quote, no
// backslash, nothing a ClickHouse string literal would treat specially.
var agentRE = regexp.MustCompile(`^[A-Za-z0-9\-_.:/@+~#=]{0,128}$`)

func validAgents(agents []string) error {
	for _, a := range agents {
		if !agentRE.MatchString(a) {
			return fmt.Errorf("alerter: an agent name of %d bytes does not fit the identifier grammar", len(a))
		}
	}
	return nil
}

// agentCond is the condition " AND <col> IN @agents" of Reader.Agents, or
// "" when every agent is read. The names are never part of the SQL text:
// Reader.query binds @agents (a tuple of string literals, quoted by the
// driver), after Gather has checked each name against agentRE.
func (s *Reader) agentCond(col string) string {
	if len(s.Agents) == 0 {
		return ""
	}
	return " AND " + col + " IN @" + agentsParam
}

// agentsParam names the bound parameter of Reader.Agents.
const agentsParam = "agents"

// bound is the values every query of the Reader binds: Reader.Agents as
// @agents, or none. A query without @agents ignores it.
func (s *Reader) bound() []any {
	if len(s.Agents) == 0 {
		return nil
	}
	names := make([]any, len(s.Agents))
	for i, a := range s.Agents {
		names[i] = a
	}
	return []any{clickhouse.Named(agentsParam, clickhouse.GroupSet{Value: names})}
}

// tableIn is one of errtrail's tables (a schema constant) in database db,
// which Gather has checked with schema.ValidDatabase: the one way a table
// name enters the alerter's SQL.
func tableIn(db, table string) string { return db + "." + table }

// errorsIn is the errors table of db, which most queries read.
func errorsIn(db string) string { return tableIn(db, schema.TableErrors) }

// Gather runs the evaluation's queries for the span cfg.SpanAt(now).
func (s *Reader) Gather(ctx context.Context, cfg *Config, now time.Time) (*Input, error) {
	db := s.Database
	if db == "" {
		db = schema.DefaultDatabase
	}
	if err := schema.ValidDatabase(db); err != nil {
		return nil, err
	}
	if err := validAgents(s.Agents); err != nil {
		return nil, err
	}
	sp := cfg.SpanAt(now)
	if len(s.Agents) > 0 && (s.Reference || cfg.NeedsOwnBaseline(windowSeconds(sp), 0, 0)) {
		return nil, fmt.Errorf("alerter: Reader.Agents needs the reduced reads: not with Reference or a threshold of 0 or below")
	}
	// The queries that do not depend on each other run at once, each
	// filling an Input of its own.
	type step struct {
		name string
		run  func(context.Context, string, *Config, Span, *Input) error
	}
	steps := []step{{StepCounts, s.counts}, {StepRetries, s.retries}, {StepGateway, s.gateway}, {StepOutcomes, s.outcomes}}
	for _, name := range s.Steps {
		if !slices.ContainsFunc(steps, func(st step) bool { return st.name == name }) {
			return nil, fmt.Errorf("alerter: unknown Gather step %q", name)
		}
	}
	parts := make([]Input, len(steps))
	var fns []func() error
	for i, step := range steps {
		if len(s.Steps) > 0 && !slices.Contains(s.Steps, step.name) {
			continue
		}
		fns = append(fns, func() error { return step.run(ctx, db, cfg, sp, &parts[i]) })
	}
	if err := parallel(fns...); err != nil {
		return nil, err
	}
	in := &parts[0] // counts
	in.Now = now
	in.Retries = parts[1].Retries
	in.Gateways = parts[2].Gateways
	in.DeadLetters, in.Accepted = parts[3].DeadLetters, parts[3].Accepted
	return in, nil
}

// outcomes reads the pipeline's accepted and dead-lettered messages in the
// current window (minute rollup; the window is widened to the minute).
func (s *Reader) outcomes(ctx context.Context, db string, _ *Config, sp Span, in *Input) error {
	sql := fmt.Sprintf(`SELECT outcome, dl_reason, sum(n)
FROM %s
WHERE minute >= toDateTime(%d) AND minute <= toDateTime(%d)
GROUP BY outcome, dl_reason`, tableIn(db, schema.TableOutcomes1m), floorTo(sp.WindowStart, 60), sp.End)
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

// observe tells Observe, one call at a time.
func (s *Reader) observe(name string, rows uint64, took time.Duration, err error) {
	if s.Observe != nil {
		s.observeMu.Lock()
		s.Observe(name, rows, took, err)
		s.observeMu.Unlock()
	}
}

// clusterSettings ends every query of the alerter. On a cluster the plain
// table names are Distributed tables, and a subquery over one inside a
// distributed IN is refused by default; the alerter's subqueries are over
// all of an agent's callers, whichever shards hold them, so 'global' runs
// each once and sends its result to the shards (GLOBAL IN). On one server
// it changes nothing. A SETTINGS clause, not the context's settings, so the
// settings of a caller's context (a story's) still apply.
const clusterSettings = "SETTINGS distributed_product_mode = 'global'"

func (s *Reader) query(ctx context.Context, name, sql string, row func(driver.Rows) error) (err error) {
	var read uint64
	opts := []clickhouse.QueryOption{clickhouse.WithProgress(func(p *clickhouse.Progress) { read += p.Rows })}
	if s.QueryIDPrefix != "" {
		opts = append(opts, clickhouse.WithQueryID(fmt.Sprintf("%s%s-%d", s.QueryIDPrefix, name, s.queries.Add(1))))
	}
	ctx = clickhouse.Context(ctx, opts...)
	start := time.Now()
	defer func() {
		s.observe(name, read, time.Since(start), err)
		if err != nil {
			err = fmt.Errorf("alerter: query %s: %w", name, err)
		}
	}()
	rows, err := s.Conn.Query(ctx, sql+"\n"+clusterSettings, s.bound()...)
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
