package alerter

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// retries reads the retry statistics.
//
// A retry is a reply with attempt > 1 observed in the retry window. Its
// sequence (per agent, caller, observer and message_id, or idempotency key)
// is read from further back, Retry.MaxDelay before the window, so that a
// caller that honours a long Retry-After (an hourly quota) is paired with
// its first attempt. Only ids that have a retry in the window are read from
// the wider range.
//
// A pair (previous, next) of the sequence with next in the window and a
// higher attempt is "paired" when the previous reply gave a delay, and
// "early" when next came sooner than that delay. An id whose lowest attempt
// is > 1 was never sent as a first attempt: the caller rotated it. It is
// called rotated only when it was first seen at least RotationMargin plus
// the largest delay its replies asked for after the start of the rows read:
// an earlier attempt cannot hide before them. A retry after a delay longer
// than MaxDelay is therefore never called rotated.
//
// Only the callers that can be flagged are read (not with Reader.Reference):
// a caller's early retries are replies in the window and its rotated ids
// have a retry in the window each, so a caller with fewer than
// Retry.MinEarly replies and fewer than Retry.MinRotated retries in the
// window can have neither verdict, and its sequences are not built.
func (s *Reader) retries(ctx context.Context, db string, cfg *Config, sp Span, in *Input) error {
	windowFrom := sp.End - int64(cfg.Retry.Window/time.Second)
	readFrom := windowFrom - int64(cfg.Retry.MaxDelay/time.Second)
	margin := int64(cfg.Retry.RotationMargin / time.Millisecond)
	ag := s.agentCond("agent") // Reader.Agents, or ""
	// The ids whose sequences are built: those with a retry in the window.
	msgIDs := fmt.Sprintf(`SELECT message_id FROM %[1]s
            WHERE observed_at > toDateTime(%[2]d) AND observed_at <= toDateTime(%[3]d)
                AND message_id != '' AND attempt > 1%[4]s`, errorsIn(db), windowFrom, sp.End, ag)
	keyIDs := fmt.Sprintf(`SELECT idempotency_key_hash FROM %[1]s
            WHERE observed_at > toDateTime(%[2]d) AND observed_at <= toDateTime(%[3]d)
                AND idempotency_key_hash != 0 AND attempt > 1%[4]s`, errorsIn(db), windowFrom, sp.End, ag)
	if !s.Reference {
		// ...of the callers that can be flagged, in one pass over the
		// window. An early retry's reply is in the window to the
		// millisecond, so its second may be the window's first. Callers
		// are told apart by cityHash64(agent, caller): two that share a
		// hash are counted together, which can only let one more through.
		minEarly, minRotated := max(cfg.Retry.MinEarly, 1), max(cfg.Retry.MinRotated, 1)
		msgIDs = fmt.Sprintf(`SELECT arrayJoin(ids) FROM
            (
                SELECT groupArrayIf(message_id, attempt > 1 AND observed_at > toDateTime(%[2]d)) AS ids
                FROM %[1]s
                WHERE observed_at >= toDateTime(%[2]d) AND observed_at <= toDateTime(%[3]d) AND message_id != ''%[6]s
                GROUP BY cityHash64(agent, caller)
                HAVING count() >= %[4]d OR length(ids) >= %[5]d
            )`, errorsIn(db), windowFrom, sp.End, minEarly, minRotated, ag)
		keyIDs = fmt.Sprintf(`SELECT arrayJoin(keys) FROM
            (
                SELECT groupArray(idempotency_key_hash) AS keys
                FROM %[1]s
                WHERE observed_at > toDateTime(%[2]d) AND observed_at <= toDateTime(%[3]d)
                    AND idempotency_key_hash != 0 AND attempt > 1%[5]s
                GROUP BY cityHash64(agent, caller)
                HAVING length(keys) >= %[4]d
            )`, errorsIn(db), windowFrom, sp.End, minRotated, ag)
	}
	retriesSQL := fmt.Sprintf(`SELECT agent, caller,
    toUInt64(sum(retries)), toUInt64(sum(paired)), toUInt64(sum(early)), toUInt64(sum(fresh))
FROM
(
    SELECT agent, caller,
        arraySort(x -> tupleElement(x, 1), groupArray((observed_at_ms, attempt, retry_after_ms))) AS ev,
        countIf(attempt > 1 AND observed_at > toDateTime(%[2]d)) AS retries,
        arrayCount((p, n) -> tupleElement(n, 2) > tupleElement(p, 2) AND tupleElement(p, 3) >= 0
                AND tupleElement(n, 1) > %[2]d000,
            arrayPopBack(ev), arrayPopFront(ev)) AS paired,
        arrayCount((p, n) -> tupleElement(n, 2) > tupleElement(p, 2) AND tupleElement(p, 3) >= 0
                AND tupleElement(n, 1) > %[2]d000
                AND toInt64(tupleElement(n, 1)) - toInt64(tupleElement(p, 1)) < tupleElement(p, 3),
            arrayPopBack(ev), arrayPopFront(ev)) AS early,
        if(min(attempt) > 1
            AND toInt64(min(observed_at_ms)) >= %[3]d000 + %[4]d + greatest(toInt64(max(retry_after_ms)), 0), 1, 0) AS fresh
    FROM %[1]s
    PREWHERE message_id IN
        (
            %[6]s
        )
    WHERE observed_at > toDateTime(%[3]d) AND observed_at <= toDateTime(%[5]d) AND message_id != ''%[7]s
    GROUP BY agent, caller, source_kind, source_id, message_id
    HAVING retries > 0
)
GROUP BY agent, caller`, errorsIn(db), windowFrom, readFrom, margin, sp.End, msgIDs, ag)
	retries := map[[2]string]*RetryStats{}
	stats := func(agent, caller string) *RetryStats {
		k := [2]string{agent, caller}
		if retries[k] == nil {
			retries[k] = &RetryStats{Agent: agent, Caller: caller}
		}
		return retries[k]
	}
	err := s.query(ctx, QRetries, retriesSQL, func(r driver.Rows) error {
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
		return err
	}
	idemSQL := fmt.Sprintf(`SELECT agent, caller, toUInt64(sum(retries)), toUInt64(sum(fresh))
FROM
(
    SELECT agent, caller, countIf(attempt > 1 AND observed_at > toDateTime(%[2]d)) AS retries,
        if(min(attempt) > 1
            AND toInt64(min(observed_at_ms)) >= %[3]d000 + %[4]d + greatest(toInt64(max(retry_after_ms)), 0), 1, 0) AS fresh
    FROM %[1]s
    PREWHERE idempotency_key_hash IN
        (
            %[6]s
        )
    WHERE observed_at > toDateTime(%[3]d) AND observed_at <= toDateTime(%[5]d) AND idempotency_key_hash != 0%[7]s
    GROUP BY agent, caller, source_kind, source_id, idempotency_key_hash
    HAVING retries > 0
)
GROUP BY agent, caller`, errorsIn(db), windowFrom, readFrom, margin, sp.End, keyIDs, ag)
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
		return err
	}
	for _, st := range retries {
		in.Retries = append(in.Retries, *st)
	}
	sort.Slice(in.Retries, func(i, j int) bool {
		a, b := in.Retries[i], in.Retries[j]
		return a.Agent < b.Agent || (a.Agent == b.Agent && a.Caller < b.Caller)
	})
	return nil
}
