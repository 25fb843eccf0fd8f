package lookup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/schema"
)

// ContextMinutes is the length of Context: the whole minutes around the
// record, 7 before its minute and 7 after. Minutes that had not begun when
// the story is told are not listed (contextWindow).
const ContextMinutes = 15

// contextWindow is the span of a record's context: ContextMinutes whole
// minutes centred on the record's minute, ended at now when now falls
// inside it, so a minute that has not happened yet is never shown as a
// minute without errors (it would read as "the caller stopped"). The
// record's own minute is always in it, even when its producer's clock is
// ahead of ours. n is the number of minutes begun before to: the last of
// them can be the current, partial, minute.
func contextWindow(observed, now time.Time) (from, to time.Time, n int) {
	own := observed.Truncate(time.Minute)
	from = own.Add(-(ContextMinutes / 2) * time.Minute)
	to = from.Add(ContextMinutes * time.Minute)
	if now.Before(to) {
		to = now
		if end := own.Add(time.Minute); to.Before(end) {
			to = end
		}
	}
	n = int((to.Sub(from) + time.Minute - 1) / time.Minute)
	return from, to, n
}

// contextOf reads the caller's errors per minute around the record
// (callers_1m, by its sorting-key prefix minute, agent, caller: quota,
// overload and the other kinds together, KindOther) and the
// alerter's verdicts at the record's moment: those it recorded in the
// incidents table when an alerter was recording then (recordedVerdicts),
// else computed afresh (verdicts). A failure of the verdicts, or
// their missing Finder.VerdictBudget counted from began, is reported in
// VerdictError, not returned: the rest of the story holds.
func (f *Finder) contextOf(ctx context.Context, r *Row, began time.Time) (Context, error) {
	start, end, begun := contextWindow(r.ObservedAt, f.now())
	c := Context{From: start, To: end, Minutes: make([]Minute, begun)}
	for i := range c.Minutes {
		c.Minutes[i] = Minute{Minute: start.Add(time.Duration(i) * time.Minute), ByKind: map[string]int64{}}
	}
	// The verdicts fill a Context of their own, copied in when they come:
	// past VerdictBudget the story goes on without them.
	type verdictsDone struct {
		c   Context
		err error
	}
	verdicts := make(chan verdictsDone, 1)
	vctx, cancel := f.verdictContext(ctx, began)
	defer cancel()
	go func() {
		var v verdictsDone
		// What the alerter recorded then, when it was recording; else
		// computed afresh.
		recorded, err := f.recordedVerdicts(vctx, r, &v.c)
		if err == nil && !recorded {
			_, done := f.step("verdicts") // the alerter names its own queries
			v.c = Context{VerdictSource: VerdictsRecomputed}
			err = f.verdicts(vctx, r, &v.c)
			done(err)
		}
		v.err = err
		verdicts <- v
	}()

	q := fmt.Sprintf("SELECT toUInt32(minute) AS m, toInt64(sum(quota)), toInt64(sum(overload)), toInt64(sum(n)) FROM %s"+
		" WHERE minute >= toDateTime(?) AND minute < toDateTime(?) AND agent = ? AND caller = ?"+
		" GROUP BY m", f.table(schema.TableCallers1m))
	conn, done := f.step("minutes")
	// The other callers of the record's minute are read at the same time.
	var oerr error
	others := make(chan struct{})
	go func() {
		defer close(others)
		oerr = f.otherCallers(ctx, conn, r, &c)
	}()
	rows, err := conn.Query(ctx, q, c.From.Unix(), c.To.Unix(), r.Agent, r.Caller)
	if err == nil {
		for rows.Next() {
			var m uint32
			var quota, overload, n int64
			if err = rows.Scan(&m, &quota, &overload, &n); err != nil {
				break
			}
			if i := (int64(m) - start.Unix()) / 60; i >= 0 && i < int64(begun) {
				addKinds(c.Minutes[i].ByKind, quota, overload, n)
			}
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	<-others
	err = errors.Join(err, oerr)
	done(err)
	var budget <-chan time.Time
	in := verdicts // where the select takes the verdicts from
	if f.VerdictBudget > 0 {
		left := f.VerdictBudget - time.Since(began)
		if left <= 0 {
			// Already past: without the verdicts, even when they are in
			// (a select would pick either at random).
			closed := make(chan time.Time)
			close(closed)
			budget, in = closed, nil
		} else {
			t := time.NewTimer(left)
			defer t.Stop()
			budget = t.C
		}
	}
	select {
	case v := <-in:
		if v.err != nil {
			c.VerdictAt = v.c.VerdictAt
			c.VerdictError = "the verdicts could not be computed: " + v.err.Error()
			break
		}
		c.AgentOverloaded, c.CallerRunaway, c.LimitTooLow = v.c.AgentOverloaded, v.c.CallerRunaway, v.c.LimitTooLow
		c.RetryStorm, c.RetryStormReasons, c.RetryStormChecked = v.c.RetryStorm, v.c.RetryStormReasons, v.c.RetryStormChecked
		c.Undecided, c.VerdictAt, c.verdictsOK = v.c.Undecided, v.c.VerdictAt, v.c.verdictsOK
		c.VerdictSource = v.c.VerdictSource
	case <-budget:
		cancel()
		c.VerdictAt = time.Unix(r.ObservedAt.Unix(), 0).UTC()
		c.VerdictError = fmt.Sprintf("the verdicts were not computed in time (budget %v); ask again", f.VerdictBudget)
	}
	return c, err
}

// verdictGrace is how long past Finder.VerdictBudget the verdicts' queries
// may still run: the story stops waiting at the budget and cancels them,
// and the deadline a little later ends them on the server too.
const verdictGrace = time.Second

// verdictContext is the context of the verdicts' queries. With a
// VerdictBudget it has a deadline verdictGrace past the budget, counted from
// began: clickhouse-go sends a deadline as the query's max_execution_time,
// so a recompute the story gave up on stops on the server as well (a
// cancelled query goes on running there, seen on 18.16). Without a budget
// the caller's context bounds them, as it bounds the story.
func (f *Finder) verdictContext(ctx context.Context, began time.Time) (context.Context, context.CancelFunc) {
	if f.VerdictBudget > 0 {
		return context.WithDeadline(ctx, began.Add(f.VerdictBudget+verdictGrace))
	}
	return context.WithCancel(ctx)
}

// KindOther is the key of Minute.ByKind that counts every kind but quota
// and overload: callers_1m, the rollup per caller, counts those two apart
// and the rest together.
const KindOther = "other"

// addKinds adds one callers_1m row's counts to a minute's ByKind: quota,
// overload and KindOther (the rest of n), each only when above 0.
func addKinds(by map[string]int64, quota, overload, n int64) {
	for _, k := range []struct {
		kind string
		n    int64
	}{{"quota", quota}, {"overload", overload}, {KindOther, n - quota - overload}} {
		if k.n > 0 {
			by[k.kind] += k.n
		}
	}
}

// otherCallers counts the agent's other named callers with errors of the
// record's kind in the record's minute (callers_1m, by its sorting-key
// prefix minute, agent): quota and overload exactly, any other kind as
// "errors of a kind other than quota and overload" (the meaning says so).
// A caller seen by several observers counts once.
func (f *Finder) otherCallers(ctx context.Context, conn driver.Conn, r *Row, c *Context) error {
	q := fmt.Sprintf("SELECT toInt64(uniqExact(caller)) FROM %s"+
		" WHERE minute = toDateTime(?) AND agent = ? AND caller != ? AND caller != '' AND %s",
		f.table(schema.TableCallers1m), othersCondition(r.Kind))
	return conn.QueryRow(ctx, q, r.ObservedAt.Truncate(time.Minute).Unix(), r.Agent, r.Caller).Scan(&c.OtherCallers)
}

// othersCondition selects the callers_1m rows of callers with errors of
// kind: a row with a count above 0 means the caller had such an error in
// that minute (the counts are sums of non-negative numbers).
func othersCondition(kind string) string {
	switch kind {
	case "quota":
		return "quota > 0"
	case "overload":
		return "overload > 0"
	}
	return "n > quota + overload"
}

// verdicts has Finder.Recompute compute the agent's verdicts at the
// record's second afresh, and reads the agent's and the caller's verdicts
// from them. Without the previous evaluation the overload hysteresis is
// not applied: an overload that was clearing at that moment reads as not
// overloaded. Without a Recompute there are none: an error says so.
func (f *Finder) verdicts(ctx context.Context, r *Row, c *Context) error {
	at := time.Unix(r.ObservedAt.Unix(), 0).UTC() // the record is the window's last second
	c.VerdictAt = at
	if f.Recompute == nil {
		return errNoRecompute
	}
	q := incidents.Recompute{Agent: r.Agent, At: at, RetryStorms: f.RetryStorms,
		QueryIDPrefix: f.queryIDPrefix("verdicts-")}
	if f.Observe != nil {
		q.Observe = func(name string, rows uint64, took time.Duration, err error) {
			f.observeMu.Lock() // Observe is called one at a time, the story's steps included
			f.Observe("verdicts/"+name, rows, took, err)
			f.observeMu.Unlock()
		}
	}
	m, err := f.Recompute.Recompute(ctx, q)
	if err != nil {
		return err
	}
	verdictsOf(c, r, m)
	c.RetryStormChecked = f.RetryStorms
	c.verdictsOK = true
	return nil
}

// errNoRecompute: no alerter recorded the moment, and the Finder has no
// Recompute to compute the verdicts afresh.
var errNoRecompute = errors.New("no alerter was recording incidents at that moment, and this lookup does not compute verdicts afresh")
