package alerter

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/schema"
)

// counts reads the baseline buckets, the current window and the quota
// rejections by limit.
//
// A request that both the agent and a gateway in front of it report is one
// request: every count is taken per observer kind (source_kind) and the
// larger of the kinds is kept, so per-agent rates count it once while a
// gateway that answers for an agent nobody else observes still counts.
// Whether replies were typed is the agent's own account when it reports
// (sourced): a gateway that strips the types is gateway mangling, not the
// agent's untyped errors.
// agentsOwn takes cannot_tell and untyped from the agent-side observer when
// there is one, else the larger of the others.
const agentsOwn = `if(maxIf(n, source_kind = 'agent') > 0, maxIf(cannot_tell, source_kind = 'agent'), max(cannot_tell)),
    if(maxIf(n, source_kind = 'agent') > 0, maxIf(untyped, source_kind = 'agent'), max(untyped))`

func (s *Source) counts(ctx context.Context, db string, cfg *Config, sp Span, in *Input) error {
	// Baseline: the callers_1m rollup at minute resolution, the raw rows
	// for shorter buckets (time-compressed tests).
	var bucketsSQL string
	if sp.Bucket == 60 {
		bucketsSQL = fmt.Sprintf(`SELECT agent, caller, toUInt32(minute) AS b,
    max(n), max(quota), max(overload), %[5]s
FROM
(
    SELECT agent, caller, minute, source_kind,
        sum(n) AS n, sum(quota) AS quota, sum(overload) AS overload,
        sum(cannot_tell) AS cannot_tell, sum(untyped) AS untyped
    FROM %[1]s.%[2]s
    WHERE minute >= toDateTime(%[3]d) AND minute < toDateTime(%[4]d)
    GROUP BY agent, caller, minute, source_kind
)
GROUP BY agent, caller, b`, db, schema.TableCallers1m, sp.BaselineStart, sp.BaselineEnd, agentsOwn)
	} else {
		bucketsSQL = fmt.Sprintf(`SELECT agent, caller, b,
    max(n), max(quota), max(overload), %[6]s
FROM
(
    SELECT agent, caller, toUInt32(intDiv(toUInt32(observed_at), %[2]d) * %[2]d) AS b, source_kind,
        count() AS n, countIf(kind = 'quota') AS quota, countIf(kind = 'overload') AS overload,
        countIf(%[3]s) AS cannot_tell, countIf(typed = 0) AS untyped
    FROM %[1]s.errors
    WHERE observed_at >= toDateTime(%[4]d) AND observed_at < toDateTime(%[5]d)
    GROUP BY agent, caller, b, source_kind
)
GROUP BY agent, caller, b`, db, sp.Bucket, schema.CannotTellExpr, sp.BaselineStart, sp.BaselineEnd, agentsOwn)
	}
	err := s.query(ctx, QBuckets, bucketsSQL, func(r driver.Rows) error {
		var b Bucket
		var start uint32
		var total, quota, overload, unknown, untyped uint64
		if err := r.Scan(&b.Agent, &b.Caller, &start, &total, &quota, &overload, &unknown, &untyped); err != nil {
			return err
		}
		b.Start = int64(start)
		b.Total, b.Quota, b.Overload, b.Unknown, b.Untyped =
			int64(total), int64(quota), int64(overload), int64(unknown), int64(untyped)
		in.Buckets = append(in.Buckets, b)
		return nil
	})
	if err != nil {
		return err
	}

	// The current window, to the second, from the raw rows.
	ovFrom := sp.End - int64(cfg.Overload.Window.Seconds())
	clearFrom := sp.End - int64(cfg.Overload.ClearAfter.Seconds())
	windowSQL := fmt.Sprintf(`SELECT agent, caller,
    max(n), max(quota), max(overload), %[7]s, max(ov_recent), max(ov_clear)
FROM
(
    SELECT agent, caller, source_kind,
        count() AS n, countIf(kind = 'quota') AS quota, countIf(kind = 'overload') AS overload,
        countIf(%[2]s) AS cannot_tell, countIf(typed = 0) AS untyped,
        countIf(kind = 'overload' AND observed_at > toDateTime(%[3]d)) AS ov_recent,
        countIf(kind = 'overload' AND observed_at > toDateTime(%[4]d)) AS ov_clear
    FROM %[1]s.errors
    WHERE observed_at > toDateTime(%[5]d) AND observed_at <= toDateTime(%[6]d)
    GROUP BY agent, caller, source_kind
)
GROUP BY agent, caller`, db, schema.CannotTellExpr, ovFrom, clearFrom, sp.WindowStart, sp.End, agentsOwn)
	err = s.query(ctx, QWindow, windowSQL, func(r driver.Rows) error {
		var w WindowCount
		var total, quota, overload, unknown, untyped, recent, clear uint64
		if err := r.Scan(&w.Agent, &w.Caller, &total, &quota, &overload, &unknown, &untyped, &recent, &clear); err != nil {
			return err
		}
		w.Total, w.Quota, w.Overload, w.Unknown, w.Untyped, w.OverloadRecent, w.OverloadClear =
			int64(total), int64(quota), int64(overload), int64(unknown), int64(untyped), int64(recent), int64(clear)
		in.Window = append(in.Window, w)
		return nil
	})
	if err != nil {
		return err
	}

	// Quota rejections by limit name in the current window.
	limitsSQL := fmt.Sprintf(`SELECT agent, limit_name, max(n)
FROM
(
    SELECT agent, limit_name, source_kind, count() AS n
    FROM %s.errors
    WHERE observed_at > toDateTime(%d) AND observed_at <= toDateTime(%d) AND kind = 'quota'
    GROUP BY agent, limit_name, source_kind
)
GROUP BY agent, limit_name`, db, sp.WindowStart, sp.End)
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
