package alerter

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/schema"
)

// A request that both the agent and a gateway in front of it report is one
// request: every count is taken per observer kind (source_kind) and the
// larger of the kinds is kept, so per-agent rates count it once while a
// gateway that answers for an agent nobody else observes still counts.
// Whether replies were typed is the agent's own account when it reports
// (sourced): a gateway that strips the types is gateway mangling, not the
// agent's untyped errors.

// agentsOwn takes cannot_tell (the untyped errors) from the agent-side
// observer when there is one, else the larger of the others.
const agentsOwn = `if(maxIf(n, source_kind = 'agent') > 0, maxIf(cannot_tell, source_kind = 'agent'), max(cannot_tell))`

// counts reads the baseline, the current window and the quota rejections
// by limit.
//
// The baseline is reduced in ClickHouse (Input.Baseline): per agent, the
// overload replies per bucket and the number of idle callers (baseline
// buckets, no reply in the window); bucket by bucket only for the callers
// whose own baseline can change a verdict (NeedsOwnBaseline), all of them
// callers of the window. With Reader.Reference, or when a threshold makes
// every caller's baseline matter, every bucket of every caller is read
// instead (Input.Buckets alone), as the alerter did before: the verdicts
// are the same.
func (s *Reader) counts(ctx context.Context, db string, cfg *Config, sp Span, in *Input) error {
	secs := windowSeconds(sp)
	if s.Reference || cfg.NeedsOwnBaseline(secs, 0, 0) {
		// The baseline does not depend on the window: both at once.
		var base Input
		err := parallel(
			func() error { return s.buckets(ctx, db, sp, &base) },
			func() error {
				if err := s.window(ctx, db, cfg, sp, in); err != nil {
					return err
				}
				return s.limits(ctx, db, sp, in)
			})
		in.Buckets = base.Buckets
		return err
	}
	var base, callers Input
	baseline := s.agentBuckets
	if len(s.Agents) > 0 {
		baseline = s.restrictedBaseline
	}
	// The limits do not depend on the window either; the callers' pass
	// does (it is told the window's callers).
	var limits []LimitCount
	err := parallel(
		func() error { return baseline(ctx, db, sp, &base) },
		func() error {
			var l Input
			err := s.limits(ctx, db, sp, &l)
			limits = l.Limits
			return err
		},
		func() error {
			if err := s.window(ctx, db, cfg, sp, in); err != nil {
				return err
			}
			return s.callers(ctx, db, cfg, sp, in.Window, &callers)
		})
	in.Limits = limits
	if err != nil {
		return err
	}
	in.Baseline = base.Baseline
	in.Buckets = callers.Buckets
	in.Baseline.Agents = mergeAgentBaselines(in.Baseline.Agents, callers.Baseline.Agents)
	return nil
}

// parallel runs fns at once and returns the first error (in fns' order)
// once all have returned.
func parallel(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// mergeAgentBaselines joins the overload of a and the idle callers of b,
// by agent name.
func mergeAgentBaselines(a, b []AgentBaseline) []AgentBaseline {
	byAgent := make(map[string]int, len(a))
	for i := range a {
		byAgent[a[i].Agent] = i
	}
	for _, x := range b {
		if i, ok := byAgent[x.Agent]; ok {
			a[i].IdleCallers += x.IdleCallers
			continue
		}
		byAgent[x.Agent] = len(a)
		a = append(a, x)
	}
	sort.Slice(a, func(i, j int) bool { return a[i].Agent < a[j].Agent })
	return a
}

// The external tables (sent with the query) that name the callers of the
// current window: all of them, and those whose own baseline can matter.
const (
	extWindowCallers = "alerter_window_callers"
	extOwnBaseline   = "alerter_own_baseline_callers"
)

// windowSeconds is the length of the window that the per-minute rates of
// Evaluate divide by.
func windowSeconds(sp Span) float64 {
	if secs := sp.WindowSeconds(); secs > 0 {
		return secs
	}
	return 1
}

// perMinute is n replies in a window of secs seconds as a rate per minute.
func perMinute(n int64, secs float64) float64 { return float64(n) / secs * 60 }

// NeedsOwnBaseline reports whether the baseline of a caller with total
// error replies, quota of them rejections, in a current window of secs
// seconds can change a verdict. Evaluate compares a caller with its own
// baseline (or asks whether it has one) only when its rate reaches
// Runaway.RiseMinPerMin or Runaway.MinPerMin, or its quota rate
// LimitTooLow.MinPerMin: below all three, the caller can neither rise, nor
// be a runaway, nor count towards "limit too low", whatever its past. Such a
// caller's baseline is only counted (ActiveCallers), never read bucket by
// bucket. NeedsOwnBaseline(secs, 0, 0) is true only when a threshold is 0 or
// below: then every caller needs its own baseline.
func (c *Config) NeedsOwnBaseline(secs float64, total, quota int64) bool {
	r, q := perMinute(total, secs), perMinute(quota, secs)
	return q >= c.LimitTooLow.MinPerMin || r >= c.Runaway.RiseMinPerMin || r >= c.Runaway.MinPerMin
}

// bucketSource is the SQL of one row per baseline count: agent, caller, b
// (the bucket's start), source_kind and the counts n, quota, overload and
// cannot_tell (the untyped errors), from the callers_1m rollup at minute resolution
// or from the raw rows (one row each) for shorter buckets. prewhere, if not
// empty, selects rows first, on its own columns; cond (Reader.agentCond, or
// "") is added to the WHERE; only, if not empty, limits the rows to the
// buckets that start there.
func bucketSource(db string, sp Span, prewhere, cond string, only ...int64) string {
	if prewhere != "" {
		prewhere = "\n        PREWHERE " + prewhere
	}
	from, to := sp.BaselineStart, sp.BaselineEnd
	var in string
	if len(only) > 0 {
		from, to = slices.Min(only), slices.Max(only)+sp.Bucket
		list := make([]string, len(only))
		for i, b := range only {
			list[i] = fmt.Sprintf("toDateTime(%d)", b)
		}
		in = strings.Join(list, ", ")
	}
	if sp.Bucket == 60 {
		if in != "" {
			in = " AND minute IN (" + in + ")"
		}
		in += cond
		return fmt.Sprintf(`SELECT agent, caller, toUInt32(minute) AS b, source_kind, n, quota, overload, cannot_tell
        FROM %s%s
        WHERE minute >= toDateTime(%d) AND minute < toDateTime(%d)%s`,
			tableIn(db, schema.TableCallers1m), prewhere, from, to, in)
	}
	if in != "" {
		in = fmt.Sprintf(" AND toDateTime(intDiv(toUInt32(observed_at), %d) * %d) IN (%s)", sp.Bucket, sp.Bucket, in)
	}
	in += cond
	return fmt.Sprintf(`SELECT agent, caller, toUInt32(intDiv(toUInt32(observed_at), %[2]d) * %[2]d) AS b, source_kind,
            toUInt64(1) AS n, toUInt64(kind = 'quota') AS quota, toUInt64(kind = 'overload') AS overload,
            toUInt64(%[3]s) AS cannot_tell
        FROM %[1]s%[4]s
        WHERE observed_at >= toDateTime(%[5]d) AND observed_at < toDateTime(%[6]d)%[7]s`,
		errorsIn(db), sp.Bucket, schema.CannotTellExpr, prewhere, from, to, in)
}

func scanBucket(r driver.Rows, dest ...any) (Bucket, error) {
	var b Bucket
	var start uint32
	var total, quota, overload, untyped uint64
	if err := r.Scan(append(dest, &b.Agent, &b.Caller, &start, &total, &quota, &overload, &untyped)...); err != nil {
		return b, err
	}
	b.Start = int64(start)
	b.Total, b.Quota, b.Overload, b.Untyped = int64(total), int64(quota), int64(overload), int64(untyped)
	return b, nil
}

// buckets reads every baseline bucket of every caller into in.Buckets, each
// request once (the larger observer kind).
func (s *Reader) buckets(ctx context.Context, db string, sp Span, in *Input) error {
	sql := fmt.Sprintf(`SELECT agent, caller, b, max(n), max(quota), max(overload), %s
FROM
(
    SELECT agent, caller, b, source_kind,
        sum(n) AS n, sum(quota) AS quota, sum(overload) AS overload,
        sum(cannot_tell) AS cannot_tell
    FROM
    (
        %s
    )
    GROUP BY agent, caller, b, source_kind
)
GROUP BY agent, caller, b`, agentsOwn, bucketSource(db, sp, "", s.agentCond("agent")))
	return s.query(ctx, QBuckets, sql, func(r driver.Rows) error {
		b, err := scanBucket(r)
		in.Buckets = append(in.Buckets, b)
		return err
	})
}

// agentBuckets starts in.Baseline: the first baseline bucket with data,
// and each agent's overload replies per bucket, each caller's counted once
// as in Bucket.Overload (the larger observer kind).
//
// A past bucket's overload only changes when rows are added to it (late
// events) or, in the raw rows, when duplicates are merged away: either
// changes the bucket's sum of overload replies. So the Reader keeps the
// agents' overload per bucket with that sum, reads the sums of every bucket
// (QBuckets, one small read) and computes the overload only of the buckets
// that are new or whose sum changed (QOverload): one bucket a minute in
// steady state instead of the whole baseline.
//
// With Reader.Agents the sums are those of the agents read, but the history
// start is still every agent's: it is the one value Evaluate takes across
// agents, so the restricted verdicts equal the full ones.
func (s *Reader) agentBuckets(ctx context.Context, db string, sp Span, in *Input) error {
	// mine is 1 for the rows of the agents read (every row without
	// Reader.Agents).
	mine := "1"
	if c := s.agentCond("agent"); c != "" {
		mine = "agent" + c[len(" AND agent"):] // "agent IN (...)"
	}
	sql := fmt.Sprintf(`SELECT b, toUInt64(sumIf(overload, %[2]s)), toUInt64(countIf(%[2]s))
FROM
(
    %[1]s
)
GROUP BY b`, bucketSource(db, sp, "", ""), mine)
	sums := map[int64]uint64{}
	base := &BaselineSummary{HistoryStart: sp.BaselineEnd}
	err := s.query(ctx, QBuckets, sql, func(r driver.Rows) error {
		var b uint32
		var sum, rows uint64
		if err := r.Scan(&b, &sum, &rows); err != nil {
			return err
		}
		base.HistoryStart = min(base.HistoryStart, int64(b))
		if rows > 0 {
			sums[int64(b)] = sum
		}
		return nil
	})
	if err != nil {
		return err
	}
	in.Baseline = base
	key := fmt.Sprintf("%s/%d/%s", db, sp.Bucket, strings.Join(s.Agents, ","))
	s.cacheMu.Lock()
	if s.overload == nil || s.overloadKey != key {
		s.overload, s.overloadKey = map[int64]overloadBucket{}, key
	}
	var stale []int64
	for b, sum := range sums {
		if c, ok := s.overload[b]; !ok || c.sum != sum {
			stale = append(stale, b)
		}
	}
	s.cacheMu.Unlock()
	sort.Slice(stale, func(i, j int) bool { return stale[i] < stale[j] })
	fresh := map[int64]overloadBucket{}
	if len(stale) == 0 {
		s.observe(QOverload, 0, 0, nil) // nothing to compute
	} else {
		for _, b := range stale {
			fresh[b] = overloadBucket{sum: sums[b]}
		}
		if err := s.bucketOverload(ctx, db, sp, stale, fresh); err != nil {
			return err
		}
	}
	s.cacheMu.Lock()
	for b := range s.overload {
		if _, ok := sums[b]; !ok {
			delete(s.overload, b) // left the baseline (or lost its rows)
		}
	}
	for b, c := range fresh {
		s.overload[b] = c
	}
	byAgent := map[string]int{}
	for b := range sums {
		for _, ao := range s.overload[b].agents {
			i, ok := byAgent[ao.agent]
			if !ok {
				i = len(base.Agents)
				byAgent[ao.agent] = i
				base.Agents = append(base.Agents, AgentBaseline{Agent: ao.agent})
			}
			base.Agents[i].Overload = append(base.Agents[i].Overload, BucketCount{Start: b, N: ao.n})
		}
	}
	s.cacheMu.Unlock()
	for i := range base.Agents {
		o := base.Agents[i].Overload
		sort.Slice(o, func(i, j int) bool { return o[i].Start < o[j].Start })
	}
	return nil
}

// restrictedBaseline is agentBuckets for a Reader restricted to some
// agents (Reader.Agents), which reads one moment once (the support
// lookup) and so has nothing to cache: the history start and the agents'
// overload per bucket are read at once, without the bucket sums first.
//
// The same summary as agentBuckets: the overload is computed from the
// same rows (the agents' rows of the whole baseline with overload > 0;
// the buckets agentBuckets would leave out have none of them), and the
// history start is the same first baseline bucket with any reply of any
// agent, found by historyStart.
func (s *Reader) restrictedBaseline(ctx context.Context, db string, sp Span, in *Input) error {
	base := &BaselineSummary{}
	out := map[int64]overloadBucket{}
	err := parallel(
		func() error {
			var err error
			base.HistoryStart, err = s.historyStart(ctx, db, sp)
			return err
		},
		func() error { return s.bucketOverload(ctx, db, sp, nil, out) })
	if err != nil {
		return err
	}
	byAgent := map[string]int{}
	for b, ob := range out {
		for _, ao := range ob.agents {
			i, ok := byAgent[ao.agent]
			if !ok {
				i = len(base.Agents)
				byAgent[ao.agent] = i
				base.Agents = append(base.Agents, AgentBaseline{Agent: ao.agent})
			}
			base.Agents[i].Overload = append(base.Agents[i].Overload, BucketCount{Start: b, N: ao.n})
		}
	}
	for i := range base.Agents {
		o := base.Agents[i].Overload
		sort.Slice(o, func(i, j int) bool { return o[i].Start < o[j].Start })
	}
	sort.Slice(base.Agents, func(i, j int) bool { return base.Agents[i].Agent < base.Agents[j].Agent })
	in.Baseline = base
	return nil
}

// historyStart returns the first baseline bucket with any reply of any
// agent, or the span's BaselineEnd when there is none: the minimum of b
// over bucketSource, as agentBuckets finds it. Once errtrail has run for a
// baseline, that is the baseline's first bucket, which one row of it
// proves: so the first bucket alone is read first (by the sorting-key
// prefix minute of callers_1m, stopping at the first row), and the whole
// baseline only when it is empty.
func (s *Reader) historyStart(ctx context.Context, db string, sp Span) (int64, error) {
	first := fmt.Sprintf(`SELECT toUInt64(count()) FROM (SELECT b FROM (%s) LIMIT 1)`,
		bucketSource(db, sp, "", "", sp.BaselineStart))
	var n uint64
	err := s.query(ctx, QHistory, first, func(r driver.Rows) error { return r.Scan(&n) })
	if err != nil || n > 0 {
		return sp.BaselineStart, err
	}
	start := sp.BaselineEnd
	all := fmt.Sprintf(`SELECT toUInt32(min(b)), toUInt64(count()) FROM (%s)`, bucketSource(db, sp, "", ""))
	err = s.query(ctx, QHistory, all, func(r driver.Rows) error {
		var b uint32
		if err := r.Scan(&b, &n); err != nil {
			return err
		}
		if n > 0 {
			start = int64(b)
		}
		return nil
	})
	return start, err
}

// overloadBucket is one baseline bucket's overload per agent, and the sum
// of the bucket's overload replies it was computed from.
type overloadBucket struct {
	sum    uint64
	agents []agentOverload
}

type agentOverload struct {
	agent string
	n     int64
}

// bucketOverload computes the agents' overload in the buckets that start
// at buckets into out. That takes a sum per caller, bucket and observer
// kind, a row for nearly every row read; an agent whose overload replies in
// a bucket all come from one observer kind needs no max, so its rows there
// are summed directly.
func (s *Reader) bucketOverload(ctx context.Context, db string, sp Span, buckets []int64, out map[int64]overloadBucket) error {
	src := bucketSource(db, sp, "overload > 0", s.agentCond("agent"), buckets...)
	sql := fmt.Sprintf(`SELECT agent, b, toUInt64(sum(o_max))
FROM
(
    SELECT agent, b, c, max(o) AS o_max
    FROM
    (
        SELECT agent, b, c, sk, sum(overload) AS o
        FROM
        (
            SELECT agent, b, overload, (agent, b) IN
                (
                    SELECT agent, b FROM (%[1]s)
                    GROUP BY agent, b HAVING min(source_kind) != max(source_kind)
                ) AS kinds,
                if(kinds, caller, '') AS c, if(kinds, source_kind, '') AS sk
            FROM
            (
            %[1]s
            )
        )
        GROUP BY agent, b, c, sk
    )
    GROUP BY agent, b, c
)
GROUP BY agent, b`, src)
	return s.query(ctx, QOverload, sql, func(r driver.Rows) error {
		var agent string
		var b uint32
		var n uint64
		if err := r.Scan(&agent, &b, &n); err != nil {
			return err
		}
		c := out[int64(b)]
		c.agents = append(c.agents, agentOverload{agent, int64(n)})
		out[int64(b)] = c
		return nil
	})
}

// callers reads, in one pass over the baseline, each agent's idle callers
// (baseline buckets, no reply in window) into in.Baseline and the buckets
// of the window's callers whose own baseline can matter (NeedsOwnBaseline)
// into in.Buckets. The window's callers go to ClickHouse as external tables,
// so both are taken against the window that Evaluate sees.
//
// A caller is told apart from the others of the pass by cityHash64(agent,
// caller): the buckets are then checked against the names, but the idle
// callers are counted by the hash (names cost twice the CPU on 18.16). An
// idle caller that shared its 64 bits with another idle caller of its agent
// or with any caller of the window would not be counted: with w callers in
// the window and i idle, a chance of about i·w/2⁶⁴ per evaluation (3·10⁻¹¹
// at 50,000 callers, 6·10⁻⁹ at a million; ClickHouse's own uniqExact and
// multi-column IN hash to 128 bits), and then ActiveCallers, and with it
// the limit-too-low and others-rising shares, one too low.
func (s *Reader) callers(ctx context.Context, db string, cfg *Config, sp Span, window []WindowCount, in *Input) error {
	secs := windowSeconds(sp)
	counts := make(map[[2]string]*[2]int64, len(window))
	for _, w := range window {
		k := [2]string{w.Agent, w.Caller}
		c := counts[k]
		if c == nil {
			c = new([2]int64)
			counts[k] = c
		}
		c[0] += w.Total
		c[1] += w.Quota
	}
	all, err := ext.NewTable(extWindowCallers, ext.Column("agent", "String"), ext.Column("caller", "String"))
	if err != nil {
		return err
	}
	own, err := ext.NewTable(extOwnBaseline, ext.Column("agent", "String"), ext.Column("caller", "String"))
	if err != nil {
		return err
	}
	for k, c := range counts {
		if err := all.Append(k[0], k[1]); err != nil {
			return err
		}
		if cfg.NeedsOwnBaseline(secs, c[0], c[1]) {
			if err := own.Append(k[0], k[1]); err != nil {
				return err
			}
		}
	}
	// Aliases are global in ClickHouse: inner names are not reused.
	//
	// Evaluate takes only Total and Quota of these buckets (the agents'
	// overload is in the summary): Overload and Untyped are not read.
	sql := fmt.Sprintf(`SELECT idle, own, agent, c, bucket, max(n), max(quota), toUInt64(0), toUInt64(0)
FROM
(
    SELECT agent, idle, own, c, bucket, source_kind, sum(rn) AS n, sum(rq) AS quota
    FROM
    (
        SELECT agent, idle, i > 0 AND (agent, tupleElement(r, 1)) IN %[2]s AS own,
            if(own, tupleElement(r, 1), '') AS c, if(own, tupleElement(r, 2), 0) AS bucket,
            if(own, tupleElement(r, 3), '') AS source_kind,
            if(own, tupleElement(r, 4), 0) AS rn, if(own, tupleElement(r, 5), 0) AS rq
        FROM
        (
            SELECT agent, uniqExactIf(h, h NOT IN (SELECT cityHash64(agent, caller) FROM %[1]s)) AS idle,
                groupArrayIf((caller, b, source_kind, n, quota), h IN (SELECT cityHash64(agent, caller) FROM %[2]s)) AS rs
            FROM
            (
                SELECT agent, caller, b, source_kind, n, quota, cityHash64(agent, caller) AS h
                FROM
                (
                %[3]s
                )
            )
            GROUP BY agent
        )
        LEFT ARRAY JOIN rs AS r, arrayEnumerate(rs) AS i
    )
    GROUP BY agent, idle, own, c, bucket, source_kind
)
GROUP BY agent, idle, own, c, bucket`, extWindowCallers, extOwnBaseline, bucketSource(db, sp, "", s.agentCond("agent")))
	base := &BaselineSummary{}
	byAgent := map[string]bool{}
	ctx = clickhouse.Context(ctx, clickhouse.WithExternalTable(all, own))
	err = s.query(ctx, QCallers, sql, func(r driver.Rows) error {
		var idle uint64
		var isOwn uint8
		b, err := scanBucket(r, &idle, &isOwn)
		if err != nil {
			return err
		}
		if !byAgent[b.Agent] && idle > 0 {
			byAgent[b.Agent] = true
			base.Agents = append(base.Agents, AgentBaseline{Agent: b.Agent, IdleCallers: int(idle)})
		}
		if isOwn == 1 {
			in.Buckets = append(in.Buckets, b)
		}
		return nil
	})
	in.Baseline = base
	return err
}

// window reads the current window, to the second, from the raw rows.
func (s *Reader) window(ctx context.Context, db string, cfg *Config, sp Span, in *Input) error {
	ovFrom := sp.End - int64(cfg.Overload.Window.Seconds())
	clearFrom := sp.End - int64(cfg.Overload.ClearAfter.Seconds())
	windowSQL := fmt.Sprintf(`SELECT agent, caller,
    max(n), max(quota), max(overload), %[7]s, max(ov_recent), max(ov_clear)
FROM
(
    SELECT agent, caller, source_kind,
        count() AS n, countIf(kind = 'quota') AS quota, countIf(kind = 'overload') AS overload,
        countIf(%[2]s) AS cannot_tell,
        countIf(kind = 'overload' AND observed_at > toDateTime(%[3]d)) AS ov_recent,
        countIf(kind = 'overload' AND observed_at > toDateTime(%[4]d)) AS ov_clear
    FROM %[1]s
    WHERE observed_at > toDateTime(%[5]d) AND observed_at <= toDateTime(%[6]d)%[8]s
    GROUP BY agent, caller, source_kind
)
GROUP BY agent, caller`, errorsIn(db), schema.CannotTellExpr, ovFrom, clearFrom, sp.WindowStart, sp.End, agentsOwn, s.agentCond("agent"))
	return s.query(ctx, QWindow, windowSQL, func(r driver.Rows) error {
		var w WindowCount
		var total, quota, overload, untyped, recent, clear uint64
		if err := r.Scan(&w.Agent, &w.Caller, &total, &quota, &overload, &untyped, &recent, &clear); err != nil {
			return err
		}
		w.Total, w.Quota, w.Overload, w.Untyped, w.OverloadRecent, w.OverloadClear =
			int64(total), int64(quota), int64(overload), int64(untyped), int64(recent), int64(clear)
		in.Window = append(in.Window, w)
		return nil
	})
}

// limits reads the quota rejections by limit name in the current window.
func (s *Reader) limits(ctx context.Context, db string, sp Span, in *Input) error {
	limitsSQL := fmt.Sprintf(`SELECT agent, limit_name, max(n)
FROM
(
    SELECT agent, limit_name, source_kind, count() AS n
    FROM %s
    WHERE observed_at > toDateTime(%d) AND observed_at <= toDateTime(%d) AND kind = 'quota'%s
    GROUP BY agent, limit_name, source_kind
)
GROUP BY agent, limit_name`, errorsIn(db), sp.WindowStart, sp.End, s.agentCond("agent"))
	return s.query(ctx, QLimits, limitsSQL, func(r driver.Rows) error {
		var l LimitCount
		var n uint64
		if err := r.Scan(&l.Agent, &l.Limit, &n); err != nil {
			return err
		}
		l.N = int64(n)
		in.Limits = append(in.Limits, l)
		return nil
	})
}
