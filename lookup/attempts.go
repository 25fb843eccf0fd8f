package lookup

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/schema"
)

// MaxAttempts bounds the replies of one chain a story shows (the nearest
// to the record in time); Attempts.Truncated says when there were more.
const MaxAttempts = 50

// RetryRule is one rule of the seeds a retry can break, with its stable
// code (the values of Attempts.Violations and Attempt.Violations).
type RetryRule struct {
	Code     string `json:"code"`
	Checks   string `json:"checks"`   // the seed sentence, with its source
	Sentence string `json:"sentence"` // what the caller did
}

// The retry rule codes. The rotation codes are the alerter's retry-storm
// reasons (incidents.Reason*), with the alerter's definition
// (alerter/retries.go).
const (
	RuleRetriedTooSoon      = "retried_too_soon"
	RuleRotatedMessageID    = incidents.ReasonRotatedMessageID
	RuleRotatedIdemKey      = incidents.ReasonRotatedIdemKey
	RuleRetriedNonRetryable = "retried_non_retryable"
)

// RetryRules lists every retry rule a story checks.
var RetryRules = []RetryRule{
	{RuleRetriedTooSoon, `Seed 000: "Wait at least the applicable minimum, including when Retry-After is an HTTP date"`,
		"The caller retried sooner than the delay the previous reply asked for."},
	{RuleRotatedMessageID, `Seed 002: "Retry with the same messageId, so that an agent that did admit an earlier copy can deduplicate it"`,
		"The caller sent a retry (attempt above 1) under a messageId never seen before: it rotated the id."},
	{RuleRotatedIdemKey, `Seed 000: "preserve the original payload and idempotency key across a timeout, retry"`,
		"The caller sent a retry (attempt above 1) under an idempotency key never seen before: it rotated the key."},
	{RuleRetriedNonRetryable, `Seed 000: "Honor the returned retryable value" and "A non-retryable response does not authorize a new submission"`,
		"The caller sent the request again after a reply that said it was not retryable."},
}

func retryRule(code string) RetryRule {
	for _, r := range RetryRules {
		if r.Code == code {
			return r
		}
	}
	return RetryRule{Code: code}
}

// attemptRow is the part of an errors row a chain needs.
type attemptRow struct {
	EventID      string `ch:"event_id"`
	ErrorID      string `ch:"error_id"`
	ObservedAtMS uint64 `ch:"observed_at_ms"`
	Attempt      uint16 `ch:"attempt"`
	Kind         string `ch:"kind"`
	Code         string `ch:"code"`
	Retryable    int8   `ch:"retryable"`
	RetryAfterMS int64  `ch:"retry_after_ms"`
	MessageID    string `ch:"message_id"`
}

const attemptCols = "event_id, error_id, observed_at_ms, attempt, kind, code, retryable, retry_after_ms, message_id"

// chainKey is what chains the record's replies: the first of message_id,
// idempotency key hash, request_id and http_request_id the record has.
func chainKey(r *Row, idem uint64) (kind, value string) {
	switch {
	case r.MessageID != "":
		return "message_id", r.MessageID
	case idem != 0:
		return "idempotency_key_hash", ""
	case r.RequestID != "":
		return "request_id", r.RequestID
	case r.HTTPRequestID != "":
		return "http_request_id", r.HTTPRequestID
	}
	return "", ""
}

// retryWindows are the alerter's retry definitions a chain follows, at
// their defaults (alerter.DefaultConfig().Retry: a test holds them equal).
type retryWindows struct {
	Window         time.Duration // the alerter's retry window
	MaxDelay       time.Duration // the longest delay it pairs a retry with its first attempt over
	RotationMargin time.Duration // an id first seen this (plus its delays) near the read start is not rotated
}

var alerterRetry = retryWindows{Window: 5 * time.Minute, MaxDelay: time.Hour, RotationMargin: time.Minute}

// attemptSpan is how far from the record a chain is read: the longest
// delay the alerter pairs a retry with its first attempt over
// (MaxDelay), and never less than its retry window.
func attemptSpan(rw retryWindows) time.Duration {
	return max(rw.MaxDelay, rw.Window)
}

// attempts reads the record's chain and checks the retry rules. Replies of
// the same agent, caller and observer (source kind and id) are chained, as
// the alerter forms its sequences, so a request reported by both an agent
// and its gateway is not counted twice.
func (f *Finder) attempts(ctx context.Context, conn driver.Conn, r *Row, idem uint64) (Attempts, error) {
	kind, value := chainKey(r, idem)
	out := Attempts{Key: kind, Attempts: []Attempt{}, Violations: []string{}, Rules: []RetryRule{}}
	if kind == "" {
		out.Attempts = append(out.Attempts, Attempt{EventID: r.EventID, ErrorID: r.ErrorID, Attempt: r.Attempt,
			ObservedAt: r.ObservedAt, Kind: r.Kind, Code: r.Code, Retryable: r.Retryable, AskedDelayMS: r.RetryAfterMS,
			Next: "none_seen", This: true, Violations: []string{}, MessageID: r.MessageID})
		return out, nil
	}
	span := attemptSpan(alerterRetry)
	from, to := r.ObservedAt.Add(-span), r.ObservedAt.Add(span)
	db := f.db()
	// Same agent, caller and observer; the time bound keeps both reads on
	// the sorting keys (error_lookup: id, id_kind, agent, observed_at;
	// errors: agent, observed_at).
	same := "agent = ? AND caller = ? AND source_kind = ? AND source_id = ?" +
		" AND observed_at >= toDateTime(?) AND observed_at <= toDateTime(?)"
	args := []any{r.Agent, r.Caller, r.SourceKind, r.SourceID, from.Unix(), to.Unix()}
	var q string
	if kind == "idempotency_key_hash" {
		// Not in error_lookup: the agent's rows in the span, by the
		// sorting-key prefix.
		q = fmt.Sprintf("SELECT %s FROM %s PREWHERE idempotency_key_hash = ? WHERE %s", attemptCols, tableIn(db, schema.TableErrors), same)
		args = append([]any{idem}, args...)
	} else {
		// The row keys from error_lookup by its sorting key, then the rows;
		// the single-column IN on observed_at lets 18.16 use the primary
		// key of errors too (as schema.LookupQuery does).
		keys := fmt.Sprintf("FROM %s WHERE id = ? AND id_kind = ? AND agent = ?"+
			" AND observed_at >= toDateTime(?) AND observed_at <= toDateTime(?)", tableIn(db, schema.TableErrorLookup))
		q = fmt.Sprintf("SELECT %s FROM %s WHERE observed_at IN (SELECT observed_at %s)"+
			" AND (agent, observed_at, event_id) IN (SELECT agent, observed_at, event_id %s) AND %s",
			attemptCols, tableIn(db, schema.TableErrors), keys, keys, same)
		k := []any{value, kind, r.Agent, from.Unix(), to.Unix()}
		args = append(append(append([]any{}, k...), k...), args...)
	}
	// The replies nearest the record, one per event (the latest copy).
	recMS := r.ObservedAt.UnixMilli()
	q += fmt.Sprintf(" ORDER BY abs(toInt64(observed_at_ms) - %d), event_id, ingested_at DESC LIMIT 1 BY event_id LIMIT %d",
		recMS, MaxAttempts+1)
	// On a cluster the subqueries read error_lookup, whose entries are on
	// the shard of the row they name: each shard answers them from its own
	// (as schema.LookupQuery does). A SETTINGS clause: 18.16's protocol
	// carries only numeric settings. On one server it changes nothing.
	q += " " + schema.LookupQuerySettings
	var rows []attemptRow
	if err := conn.Select(ctx, &rows, q, args...); err != nil {
		return out, err
	}
	if len(rows) > MaxAttempts {
		rows, out.Truncated = rows[:MaxAttempts], true
	}
	found := false
	for _, a := range rows {
		if a.EventID == r.EventID {
			found = true
		}
	}
	if !found { // the record is always part of its own chain
		rows = append(rows, attemptRow{EventID: r.EventID, ErrorID: r.ErrorID, ObservedAtMS: uint64(recMS),
			Attempt: uint16(r.Attempt), Kind: r.Kind, Code: r.Code, Retryable: triOf(r.Retryable),
			RetryAfterMS: msOf(r.RetryAfterMS), MessageID: r.MessageID})
	}
	readFromMS := from.Unix() * 1000
	return chain(out, rows, r.EventID, readFromMS, alerterRetry), nil
}

func triOf(b *bool) int8 {
	switch {
	case b == nil:
		return -1
	case *b:
		return 1
	}
	return 0
}

func msOf(v *int64) int64 {
	if v == nil {
		return -1
	}
	return *v
}

// isRetry reports whether next resends prev's request: the caller numbered
// it higher (the alerter's pairing), or numbered neither.
func isRetry(prev, next *attemptRow) bool {
	return next.Attempt > prev.Attempt || (prev.Attempt == 0 && next.Attempt == 0)
}

// chain orders the rows, measures the waits and checks the retry rules.
// It is pure, for the tests. readFromMS is where the rows read start: a
// chain whose first reply is a retry is called rotated only when an
// earlier attempt could not hide before that start, exactly as the
// alerter calls an id rotated (alerter/retries.go): first seen at least
// Retry.RotationMargin plus the largest delay its replies asked for after
// the start of the rows read.
func chain(out Attempts, rows []attemptRow, thisEventID string, readFromMS int64, rw retryWindows) Attempts {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.ObservedAtMS != b.ObservedAtMS {
			return a.ObservedAtMS < b.ObservedAtMS
		}
		if a.Attempt != b.Attempt {
			return a.Attempt < b.Attempt
		}
		return a.EventID < b.EventID
	})
	seen := map[string]bool{}
	flag := func(a *Attempt, code string) {
		a.Violations = append(a.Violations, code)
		if !seen[code] {
			seen[code] = true
			out.Violations = append(out.Violations, code)
			out.Rules = append(out.Rules, retryRule(code))
		}
	}
	var maxDelay int64
	for _, r := range rows {
		maxDelay = max(maxDelay, r.RetryAfterMS)
	}
	for i := range rows {
		r := &rows[i]
		a := Attempt{EventID: r.EventID, ErrorID: r.ErrorID, Attempt: int(r.Attempt),
			ObservedAt: time.UnixMilli(int64(r.ObservedAtMS)).UTC(), Kind: r.Kind, Code: r.Code,
			Next: "none_seen", This: r.EventID == thisEventID, Violations: []string{}, MessageID: r.MessageID}
		if r.Retryable >= 0 {
			v := r.Retryable == 1
			a.Retryable = &v
		}
		if r.RetryAfterMS >= 0 {
			v := r.RetryAfterMS
			a.AskedDelayMS = &v
		}
		if i+1 < len(rows) {
			a.Next = "error"
		}
		if i == 0 && r.Attempt > 1 && (out.Key == "message_id" || out.Key == "idempotency_key_hash") &&
			int64(r.ObservedAtMS) >= readFromMS+rw.RotationMargin.Milliseconds()+maxDelay {
			if out.Key == "message_id" {
				flag(&a, RuleRotatedMessageID)
			} else {
				flag(&a, RuleRotatedIdemKey)
			}
		}
		if i > 0 {
			p := &rows[i-1]
			waited := int64(r.ObservedAtMS) - int64(p.ObservedAtMS)
			a.WaitedMS = &waited
			if isRetry(p, r) {
				if p.RetryAfterMS >= 0 && waited < p.RetryAfterMS {
					flag(&a, RuleRetriedTooSoon)
				}
				if p.Retryable == 0 {
					flag(&a, RuleRetriedNonRetryable)
				}
			}
		}
		out.Attempts = append(out.Attempts, a)
	}
	return out
}
