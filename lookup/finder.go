package lookup

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/redact"
	"github.com/errtrail/errtrail/schema"
)

// Finder answers lookups from errtrail's ClickHouse tables. It needs only
// read access. It is safe for concurrent use.
type Finder struct {
	Conn     driver.Conn
	Database string           // default "errtrail"
	Redactor *redact.Redactor // hashes an id the way ingest stored it when it could not be kept; nil looks ids up as given only
	Now      func() time.Time // default time.Now

	// Recompute computes the alerter's verdicts at a record's moment
	// afresh when no alerter was recording incidents then
	// (alerter.Recomputer: cmd/errtrail sets it). nil: the story of such a
	// moment says its verdicts are unknown (Context.VerdictError).
	Recompute incidents.Recomputer

	// RetryStorms adds the alerter's retry-storm verdict to the story's
	// context (Context.RetryStorm, RetryStormReasons). It is off by
	// default: it reads the agent's raw rows of Retry.MaxDelay (an hour)
	// and the story's attempts already show this request's retries; the
	// overload, runaway and limit-too-low verdicts are always computed.
	RetryStorms bool

	// VerdictBudget, if above 0, bounds the wait for the verdicts, counted
	// from the start of the story: past it the story is answered without
	// them (Context.VerdictError says they were not computed in time, the
	// verdict fields are false) and their queries are canceled. 0 waits.
	VerdictBudget time.Duration

	// Observe, if set, is told each step of a story: "find", "attempts",
	// "minutes", "verdicts" and, within the verdicts, each of the alerter's
	// queries as "verdicts/" + its name (alerter.QueryNames), with the rows
	// ClickHouse reported read, the time taken and the error. It is called
	// for one step at a time. For measurements.
	Observe func(step string, rows uint64, took time.Duration, err error)
	// QueryIDPrefix, if set, names each query in system.query_log: it runs
	// with query_id QueryIDPrefix + step + "-" + a number. For measurements.
	QueryIDPrefix string

	// CursorKey signs the cursors of List (HMAC-SHA256). Empty: a key
	// derived from Redactor's, so that every replica of a deployment takes
	// the others' cursors; without a Redactor either, a key drawn at random
	// the first time, and a cursor lasts as long as this Finder.
	CursorKey []byte

	mu        sync.Mutex // guards Redactor, which keeps scratch space
	keyOnce   sync.Once
	key       []byte // the cursor key when CursorKey is empty
	observeMu sync.Mutex
	queries   atomic.Int64
}

// queryIDPrefix is QueryIDPrefix + p, or "" without a QueryIDPrefix.
func (f *Finder) queryIDPrefix(p string) string {
	if f.QueryIDPrefix == "" {
		return ""
	}
	return f.QueryIDPrefix + p
}

// step starts one step of a story for Observe and QueryIDPrefix: the
// step's queries go through the returned conn, which names each of them
// (QueryIDPrefix + name + "-" + a number) and counts the rows they read;
// done ends the step. Without Observe and QueryIDPrefix conn is f.Conn.
func (f *Finder) step(name string) (conn driver.Conn, done func(error)) {
	if f.Observe == nil && f.QueryIDPrefix == "" {
		return f.Conn, func(error) {}
	}
	c := &stepConn{Conn: f.Conn, f: f, name: name}
	start := time.Now()
	return c, func(err error) {
		if f.Observe != nil {
			took := time.Since(start)
			f.observeMu.Lock()
			f.Observe(name, c.rows.Load(), took, err)
			f.observeMu.Unlock()
		}
	}
}

// stepConn is the connection of one step (Finder.step).
type stepConn struct {
	driver.Conn
	f    *Finder
	name string
	rows atomic.Uint64
}

// named gives one query its own id and counts its rows read. A query id
// must be unique while the query runs, and the server may still hold one
// whose rows were read: every query gets a new one.
func (c *stepConn) named(ctx context.Context) context.Context {
	opts := []clickhouse.QueryOption{clickhouse.WithProgress(func(p *clickhouse.Progress) { c.rows.Add(p.Rows) })}
	if id := c.f.queryIDPrefix(c.name + "-"); id != "" {
		opts = append(opts, clickhouse.WithQueryID(id+strconv.FormatInt(c.f.queries.Add(1), 10)))
	}
	return clickhouse.Context(ctx, opts...)
}

func (c *stepConn) Query(ctx context.Context, q string, args ...any) (driver.Rows, error) {
	return c.Conn.Query(c.named(ctx), q, args...)
}

func (c *stepConn) QueryRow(ctx context.Context, q string, args ...any) driver.Row {
	return c.Conn.QueryRow(c.named(ctx), q, args...)
}

func (c *stepConn) Select(ctx context.Context, dest any, q string, args ...any) error {
	return c.Conn.Select(c.named(ctx), dest, q, args...)
}

// table is one of errtrail's tables (a schema constant) in the Finder's
// database, checked with schema.ValidDatabase before any query runs.
func (f *Finder) table(name string) string { return tableIn(f.db(), name) }

// tableIn is table (a schema constant) in database db.
func tableIn(db, table string) string { return db + "." + table }

func (f *Finder) db() string {
	if f.Database == "" {
		return schema.DefaultDatabase
	}
	return f.Database
}

func (f *Finder) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// storySettings are the ClickHouse settings of a story's queries. Each
// reads a few granules of many columns, and the server fills a read buffer
// of max_read_buffer_size (1 MiB by default) per column file it opens: the
// point read of error_lookup (four columns in every active part) read 11.5
// MB from the page cache for 280 KB of compressed data, 6-11 ms of the
// server's CPU on 18.16 at 10 million rows; with 64 KiB buffers, 1.1 MB
// and 3-6 ms. A story replaces any settings its context carried.
var storySettings = clickhouse.Settings{"max_read_buffer_size": 64 << 10}

// Story implements Service.
func (f *Finder) Story(ctx context.Context, id string, opt FindOptions) (*Story, error) {
	began := time.Now()
	agent, err := checkName(opt.Agent, "agent")
	if err != nil {
		return nil, err
	}
	eventID, err := checkName(opt.EventID, "event_id")
	if err != nil {
		return nil, err
	}
	if id, err = checkID(id, agent != ""); err != nil {
		return nil, err
	}
	if err := schema.ValidDatabase(f.db()); err != nil {
		return nil, err
	}
	ctx = clickhouse.Context(ctx, clickhouse.WithSettings(storySettings))
	conn, done := f.step("find")
	rows, cands, err := f.find(ctx, conn, id, agent)
	if err == nil && eventID != "" {
		kept := rows[:0]
		for _, r := range rows {
			if r.EventID == eventID {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	var copies []schema.ErrorRow
	var row *schema.ErrorRow
	if err == nil && len(rows) > 0 {
		var amb *AmbiguousError
		copies, row, amb, err = f.reply(ctx, conn, rows, cands, eventID != "", agent != "")
		if amb != nil {
			done(nil)
			return nil, amb
		}
	}
	done(err)
	if err != nil {
		return nil, unavailable(err, cands)
	}
	if len(rows) == 0 {
		return nil, ErrNotFound
	}
	st := &Story{MatchedAs: matchedAs(row, cands), Record: recordOf(row)}
	st.Group = groups.KeyOf(row.Agent, row.Protocol, row.Code, row.Reason, row.Kind, row.Method).ID()
	for i := 0; st.MatchedAs == "" && i < len(copies); i++ {
		st.MatchedAs = matchedAs(&copies[i], cands)
	}
	st.Observers = observersOf(&st.Record, copies)
	// The trace, the attempts and the context are read at once; the trace
	// is merged into the record after the others are done with it.
	var tr map[string]schema.TraceRow
	var terr, aerr, cerr error
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		conn, done := f.step("traces")
		tr, terr = schema.Traces(ctx, conn, schema.Options{Database: f.db()}, []schema.ErrorRow{*row})
		done(terr)
	}()
	go func() {
		defer wg.Done()
		conn, done := f.step("attempts")
		st.Attempts, aerr = f.attempts(ctx, conn, &st.Record, row.IdempotencyKeyHash)
		done(aerr)
	}()
	go func() {
		defer wg.Done()
		st.Context, cerr = f.contextOf(ctx, &st.Record, began)
	}()
	wg.Wait()
	if t, ok := tr[row.EventID]; terr == nil && ok {
		withTrace(&st.Record, &t)
		for _, c := range cands {
			if st.MatchedAs == "" && t.TraceID != "" && c == t.TraceID {
				st.MatchedAs = "trace_id"
			}
		}
	}
	if err := errors.Join(terr, aerr, cerr); err != nil {
		return nil, unavailable(err, cands)
	}
	h := healthUnknown
	if st.Context.verdictsOK {
		h = healthOK
		if st.Context.AgentOverloaded {
			h = healthOverloaded
		}
	}
	st.Meaning = meaningOf(&st.Record, h, st.Context.OtherCallers)
	st.Findings = findingsOf(st.Record.Findings)
	return st, nil
}

// reply sorts the rows an id found into replies (groupReplies): several
// distinct replies are an *AmbiguousError; one reply gives its copies and
// the copy the story tells (the record). That copy is the one the person
// named by its event_id (picked, or the id matched an event_id), else the
// best observer's. When the rows may not hold every copy (the id was not
// the reply's error_id, or an event_id narrowed them), the reply's error_id
// is looked up for the copies of the other observers (narrowed: an agent
// narrowed the rows, which left out a copy that does not name the agent).
func (f *Finder) reply(ctx context.Context, conn driver.Conn, rows []schema.ErrorRow, cands []string, picked, narrowed bool) (copies []schema.ErrorRow, row *schema.ErrorRow, amb *AmbiguousError, err error) {
	groups := groupReplies(rows)
	if len(groups) > 1 {
		amb = &AmbiguousError{Total: len(rows), Replies: len(groups)}
	fill:
		for n, g := range groups {
			for _, i := range g {
				if len(amb.Matches) == MaxMatches {
					break fill
				}
				m := matchOf(&rows[i], matchedAs(&rows[i], cands))
				m.Reply = n + 1
				amb.Matches = append(amb.Matches, m)
			}
		}
		return nil, nil, amb, nil
	}
	for _, i := range groups[0] {
		copies = append(copies, rows[i])
	}
	named := picked
	if !named && len(copies) == 1 {
		named = matchedAs(&copies[0], cands) == "event_id"
	}
	if named && len(copies) > 1 { // the id was the event_id of one copy, other columns matched the rest
		for i := range copies {
			if matchedAs(&copies[i], cands) == "event_id" {
				copies[0], copies[i] = copies[i], copies[0]
				break
			}
		}
	}
	this := copies[0]
	if this.ErrorID != "" && (picked || narrowed || matchedAs(&this, cands) != "error_id") {
		more, err := schema.LookupAny(ctx, conn, schema.Options{Database: f.db()}, this.ErrorID)
		if err != nil {
			return nil, nil, nil, err
		}
		kept := more[:0]
		for _, r := range more {
			if sameAgent(r.Agent, this.Agent) {
				kept = append(kept, r)
			}
		}
		for _, g := range groupReplies(kept) {
			var group []schema.ErrorRow
			has := false
			for _, i := range g {
				group = append(group, kept[i])
				has = has || (kept[i].EventID == this.EventID && sameObserver(&kept[i], &this))
			}
			if has {
				copies = group
				break
			}
		}
	}
	// The record: the named copy, else the best observer's (groupReplies
	// puts it first).
	idx := 0
	for i := range copies {
		if named && copies[i].EventID == this.EventID && sameObserver(&copies[i], &this) {
			idx = i
		}
	}
	return copies, &copies[idx], nil, nil
}

// Ready implements Service: ClickHouse answers and the tables exist.
func (f *Finder) Ready(ctx context.Context) error {
	if err := schema.ValidDatabase(f.db()); err != nil {
		return err
	}
	var n uint64
	err := f.Conn.QueryRow(ctx, "SELECT count() FROM system.tables WHERE database = ? AND name IN (?, ?)",
		f.db(), schema.TableErrors, schema.TableErrorLookup).Scan(&n)
	if err != nil {
		return unavailable(err, nil)
	}
	if n != 2 {
		return &UnavailableError{Err: fmt.Errorf("database %s lacks the errors and error_lookup tables (run ingest migrate)", f.db())}
	}
	return nil
}
