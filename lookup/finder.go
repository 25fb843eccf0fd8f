package lookup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/redact"
	"github.com/errtrail/errtrail/schema"
)

// Finder answers lookups from errtrail's ClickHouse tables. It needs only
// read access. It is safe for concurrent use.
type Finder struct {
	Conn     driver.Conn
	Database string           // default "errtrail"
	Redactor *redact.Redactor // hashes an id the way ingest stored it when it could not be kept; nil looks ids up as given only
	Alerter  *alerter.Config  // the verdicts' configuration; nil means alerter.DefaultConfig()
	Now      func() time.Time // default time.Now

	mu sync.Mutex // guards Redactor, which keeps scratch space
}

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

func (f *Finder) alerterConfig() *alerter.Config {
	if f.Alerter != nil {
		return f.Alerter
	}
	c := alerter.DefaultConfig()
	return &c
}

// Story implements Service.
func (f *Finder) Story(ctx context.Context, id string, opt FindOptions) (*Story, error) {
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
	if err := alerter.ValidDatabase(f.db()); err != nil {
		return nil, err
	}
	rows, cands, err := f.find(ctx, id, agent)
	if err != nil {
		return nil, unavailable(err, cands)
	}
	if eventID != "" {
		kept := rows[:0]
		for _, r := range rows {
			if r.EventID == eventID {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	switch {
	case len(rows) == 0:
		return nil, ErrNotFound
	case len(rows) > 1:
		amb := &AmbiguousError{Total: len(rows)}
		for i := range rows[:min(len(rows), MaxMatches)] {
			amb.Matches = append(amb.Matches, matchOf(&rows[i], matchedAs(&rows[i], cands)))
		}
		return nil, amb
	}
	row := &rows[0]
	st := &Story{MatchedAs: matchedAs(row, cands), Record: recordOf(row)}
	cfg := f.alerterConfig()
	var aerr, cerr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		st.Attempts, aerr = f.attempts(ctx, &st.Record, row.IdempotencyKeyHash, cfg)
	}()
	go func() {
		defer wg.Done()
		st.Context, cerr = f.contextOf(ctx, &st.Record, cfg)
	}()
	wg.Wait()
	if err := errors.Join(aerr, cerr); err != nil {
		return nil, unavailable(err, cands)
	}
	h := healthUnknown
	if st.Context.verdictsOK {
		h = healthOK
		if st.Context.AgentOverloaded {
			h = healthOverloaded
		}
	}
	st.Meaning = meaningOf(&st.Record, h)
	st.Findings = findingsOf(st.Record.Findings)
	return st, nil
}

// Ready implements Service: ClickHouse answers and the tables exist.
func (f *Finder) Ready(ctx context.Context) error {
	if err := alerter.ValidDatabase(f.db()); err != nil {
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

// unavailable wraps a ClickHouse failure. Its text never holds the id or
// its hash, even if the server quoted the query: they are cut out.
func unavailable(err error, ids []string) error {
	var ue *UnavailableError
	if errors.As(err, &ue) {
		return err
	}
	msg := err.Error()
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		msg = "timed out: " + msg
	case errors.Is(err, context.Canceled):
		msg = "canceled: " + msg
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			msg = "timed out: " + msg
		}
	}
	for _, id := range ids {
		if id != "" {
			msg = strings.ReplaceAll(msg, id, "[id]")
		}
	}
	return &UnavailableError{Err: &scrubbed{msg: msg, cause: err}}
}

// scrubbed is an error whose text had the ids cut out; Unwrap still gives
// the cause for errors.Is (context.DeadlineExceeded, net errors).
type scrubbed struct {
	msg   string
	cause error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.cause }
