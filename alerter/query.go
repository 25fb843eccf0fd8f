package alerter

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Query names (values of the query label).
const (
	QBuckets  = "buckets"
	QLimits   = "limits"
	QRetries  = "retries"
	QIdemKeys = "idempotency_keys"
	QGateway  = "gateway"
	QOutcomes = "outcomes"
)

// QueryNames lists every query one evaluation runs.
var QueryNames = []string{QBuckets, QLimits, QRetries, QIdemKeys, QGateway, QOutcomes}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// cannotTell selects the replies that cannot tell a quota from a crash (the
// Bucket.Unknown count): no typed reason, and a kind that only says the
// agent failed or nothing at all. parse decodes a bare 500, a JSON-RPC
// -32603 without data and an untyped gRPC INTERNAL as kind internal, a bare
// 502 as unknown; a bare 429 (quota) or 503 (overload) tells by its status.
const cannotTell = "typed = 0 AND kind IN ('unknown', 'internal')"

// Source reads an Input from ClickHouse. The SQL runs on ClickHouse 18.16
// (no window functions: sequences are built with groupArray and arraySort)
// and on current releases. Only integers and the validated database name are
// formatted into it.
type Source struct {
	Conn     driver.Conn
	Database string // default "errtrail"
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

	// Counts per agent, caller and bucket: the rollup at minute resolution,
	// the raw rows for shorter buckets.
	var bucketsSQL, limitsSQL string
	if sp.Bucket == 60 {
		bucketsSQL = fmt.Sprintf(`SELECT agent, caller, toUInt32(minute) AS b,
    sum(n), sumIf(n, kind = 'quota'), sumIf(n, kind = 'overload'), sumIf(n, %[2]s), sumIf(n, typed = 0)
FROM %[1]s.errors_1m
WHERE minute >= toDateTime(%[3]d) AND minute <= toDateTime(%[4]d)
GROUP BY agent, caller, b`, db, cannotTell, sp.BaselineStart, sp.End)
		limitsSQL = fmt.Sprintf(`SELECT agent, limit_name, sum(n)
FROM %s.errors_1m
WHERE minute >= toDateTime(%d) AND minute <= toDateTime(%d) AND kind = 'quota'
GROUP BY agent, limit_name`, db, sp.WindowStart, sp.End)
	} else {
		bucketsSQL = fmt.Sprintf(`SELECT agent, caller, toUInt32(intDiv(toUInt32(observed_at), %d) * %d) AS b,
    toUInt64(count()), toUInt64(countIf(kind = 'quota')), toUInt64(countIf(kind = 'overload')),
    toUInt64(countIf(%s)), toUInt64(countIf(typed = 0))
FROM %s.errors
WHERE observed_at >= toDateTime(%d) AND observed_at <= toDateTime(%d)
GROUP BY agent, caller, b`, sp.Bucket, sp.Bucket, cannotTell, db, sp.BaselineStart, sp.End)
		limitsSQL = fmt.Sprintf(`SELECT agent, limit_name, toUInt64(count())
FROM %s.errors
WHERE observed_at >= toDateTime(%d) AND observed_at <= toDateTime(%d) AND kind = 'quota'
GROUP BY agent, limit_name`, db, sp.WindowStart, sp.End)
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
		return nil, err
	}
	err = s.query(ctx, QLimits, limitsSQL, func(r driver.Rows) error {
		var l LimitCount
		var n uint64
		if err := r.Scan(&l.Agent, &l.Limit, &n); err != nil {
			return err
		}
		l.N = int64(n)
		in.Limits = append(in.Limits, l)
		return nil
	})
	if err != nil {
		return nil, err
	}

	// Retries: sequences per agent, caller, observer and message_id, ordered
	// by observed_at_ms. A pair (previous, next) with a higher attempt next
	// is "paired" when the previous reply gave a delay, and "early" when the
	// next reply came sooner than that delay. A message_id whose lowest
	// attempt in the window is > 1 was never sent as a first attempt: the
	// caller rotated it on a retry. Only ids first seen RotationMargin or
	// more after the window's start count as rotated: the first attempt of a
	// retry near the start may lie just before the window, and once a caller
	// stops, those edge retries would otherwise become most of what is left.
	retryFrom := now.Add(-cfg.Retry.Window).Unix()
	freshFrom := retryFrom + int64(cfg.Retry.RotationMargin/time.Second)
	retriesSQL := fmt.Sprintf(`SELECT agent, caller,
    toUInt64(sum(retries)), toUInt64(sum(paired)), toUInt64(sum(early)), toUInt64(sum(fresh))
FROM
(
    SELECT agent, caller,
        arraySort(x -> tupleElement(x, 1), groupArray((observed_at_ms, attempt, retry_after_ms))) AS ev,
        countIf(attempt > 1) AS retries,
        arrayCount((p, n) -> tupleElement(n, 2) > tupleElement(p, 2) AND tupleElement(p, 3) >= 0,
            arrayPopBack(ev), arrayPopFront(ev)) AS paired,
        arrayCount((p, n) -> tupleElement(n, 2) > tupleElement(p, 2) AND tupleElement(p, 3) >= 0
                AND toInt64(tupleElement(n, 1)) - toInt64(tupleElement(p, 1)) < tupleElement(p, 3),
            arrayPopBack(ev), arrayPopFront(ev)) AS early,
        if(min(attempt) > 1 AND min(observed_at) >= toDateTime(%d), 1, 0) AS fresh
    FROM %s.errors
    WHERE observed_at >= toDateTime(%d) AND observed_at <= toDateTime(%d) AND message_id != ''
    GROUP BY agent, caller, source_kind, source_id, message_id
    HAVING retries > 0
)
GROUP BY agent, caller`, freshFrom, db, retryFrom, sp.End)
	retries := map[[2]string]*RetryStats{}
	stats := func(agent, caller string) *RetryStats {
		k := [2]string{agent, caller}
		if retries[k] == nil {
			retries[k] = &RetryStats{Agent: agent, Caller: caller}
		}
		return retries[k]
	}
	err = s.query(ctx, QRetries, retriesSQL, func(r driver.Rows) error {
		var agent, caller string
		var n, paired, early, fresh uint64
		if err := r.Scan(&agent, &caller, &n, &paired, &early, &fresh); err != nil {
			return err
		}
		st := stats(agent, caller)
		st.Retries += int64(n)
		st.WithMessageID += int64(n)
		st.Paired, st.Early, st.FreshMessage = int64(paired), int64(early), int64(fresh)
		return nil
	})
	if err != nil {
		return nil, err
	}
	idemSQL := fmt.Sprintf(`SELECT agent, caller, toUInt64(sum(retries)), toUInt64(sum(fresh))
FROM
(
    SELECT agent, caller, countIf(attempt > 1) AS retries,
        if(min(attempt) > 1 AND min(observed_at) >= toDateTime(%d), 1, 0) AS fresh
    FROM %s.errors
    WHERE observed_at >= toDateTime(%d) AND observed_at <= toDateTime(%d) AND idempotency_key_hash != 0
    GROUP BY agent, caller, source_kind, source_id, idempotency_key_hash
    HAVING retries > 0
)
GROUP BY agent, caller`, freshFrom, db, retryFrom, sp.End)
	err = s.query(ctx, QIdemKeys, idemSQL, func(r driver.Rows) error {
		var agent, caller string
		var n, fresh uint64
		if err := r.Scan(&agent, &caller, &n, &fresh); err != nil {
			return err
		}
		st := stats(agent, caller)
		st.WithIdemKey, st.FreshIdemKey = int64(n), int64(fresh)
		if int64(n) > st.Retries {
			st.Retries = int64(n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, st := range retries {
		in.Retries = append(in.Retries, *st)
	}
	sort.Slice(in.Retries, func(i, j int) bool {
		a, b := in.Retries[i], in.Retries[j]
		return a.Agent < b.Agent || (a.Agent == b.Agent && a.Caller < b.Caller)
	})

	// Gateway mangling: the same request (http_request_id, else message_id
	// and attempt) reported by an agent-side and a gateway-side observer.
	gwFrom := now.Add(-cfg.Gateway.Window).Unix()
	gatewaySQL := fmt.Sprintf(`SELECT agent, toUInt16(a_status), toUInt16(g_status), toUInt64(count()), toUInt64(sum(lost))
FROM
(
    SELECT agent,
        if(http_request_id != '', http_request_id, concat(message_id, '#', toString(attempt))) AS rk,
        anyIf(http_status, source_kind = 'agent') AS a_status,
        anyIf(http_status, source_kind = 'gateway') AS g_status,
        if(maxIf(typed, source_kind = 'agent') = 1 AND maxIf(typed, source_kind = 'gateway') = 0, 1, 0) AS lost,
        countIf(source_kind = 'agent') AS na,
        countIf(source_kind = 'gateway') AS ng
    FROM %s.errors
    WHERE observed_at >= toDateTime(%d) AND observed_at <= toDateTime(%d)
        AND source_kind IN ('agent', 'gateway') AND (http_request_id != '' OR message_id != '')
    GROUP BY agent, rk
    HAVING na > 0 AND ng > 0
)
GROUP BY agent, a_status, g_status`, db, gwFrom, sp.End)
	gws := map[string]*GatewayStats{}
	err = s.query(ctx, QGateway, gatewaySQL, func(r driver.Rows) error {
		var agent string
		var as, gs uint16
		var n, lost uint64
		if err := r.Scan(&agent, &as, &gs, &n, &lost); err != nil {
			return err
		}
		g := gws[agent]
		if g == nil {
			g = &GatewayStats{Agent: agent}
			gws[agent] = g
		}
		g.Pairs += int64(n)
		g.BodyStripped += int64(lost)
		if as != gs {
			g.StatusDiffers += int64(n)
			g.Mangled += int64(n)
			g.Rewrites = append(g.Rewrites, Rewrite{int(as), int(gs), int64(n)})
		} else {
			g.Mangled += int64(lost)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, g := range gws {
		sort.Slice(g.Rewrites, func(i, j int) bool { return g.Rewrites[i].N > g.Rewrites[j].N })
		in.Gateways = append(in.Gateways, *g)
	}
	sort.Slice(in.Gateways, func(i, j int) bool { return in.Gateways[i].Agent < in.Gateways[j].Agent })

	// Pipeline outcomes (minute rollup; the window is widened to the minute).
	outcomesSQL := fmt.Sprintf(`SELECT outcome, dl_reason, sum(n)
FROM %s.outcomes_1m
WHERE minute >= toDateTime(%d) AND minute <= toDateTime(%d)
GROUP BY outcome, dl_reason`, db, floorTo(sp.WindowStart, 60), sp.End)
	err = s.query(ctx, QOutcomes, outcomesSQL, func(r driver.Rows) error {
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
	if err != nil {
		return nil, err
	}
	return in, nil
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
