package alerter

import "time"

// Bucket counts the error replies one caller got from one agent in one
// baseline bucket (callers_1m, or the raw errors table at a finer bucket).
// A request reported by both the agent and a gateway counts once: each count
// is the larger of the agent-side and the gateway-side count.
type Bucket struct {
	Agent, Caller string
	Start         int64 // Unix seconds of the bucket's start
	Total         int64 // all error replies
	Quota         int64 // kind = quota
	Overload      int64 // kind = overload
	// Untyped counts the untyped errors: no typed reason and a kind that
	// cannot tell quota from crash (schema.CannotTellExpr: a bare 500 or
	// 502, not a bare 429 or 503). The one definition of "untyped" in the
	// alerter: the verdict, its ratio and its flags use it.
	Untyped int64
}

// WindowCount counts the error replies one caller got from one agent in the
// current window (the raw errors table, to the second), counted once per
// request like Bucket.
type WindowCount struct {
	Agent, Caller string
	Total         int64
	Quota         int64
	Overload      int64
	Untyped       int64 // as Bucket.Untyped
	// OverloadRecent and OverloadClear count the overload replies in the
	// last Overload.Window and Overload.ClearAfter.
	OverloadRecent int64
	OverloadClear  int64
}

// LimitCount is the number of quota rejections of one agent under one
// limit/policy name in the current window.
type LimitCount struct {
	Agent, Limit string
	N            int64
}

// RetryStats describes one caller's retries to one agent in the retry window.
// A retry is a reply with attempt > 1. Sequences are formed per agent,
// caller, observer (source kind and id) and message_id, ordered by
// observed_at_ms.
type RetryStats struct {
	Agent, Caller string
	Retries       int64 // replies with attempt > 1
	Paired        int64 // retries whose previous reply in the sequence gave a delay (retry_after_ms >= 0) and had a lower attempt
	Early         int64 // of Paired: gap to the previous reply < the delay it gave
	WithMessageID int64 // retries that carry a message_id
	FreshMessage  int64 // of those: the message_id has no lower attempt in the window (rotated)
	WithIdemKey   int64 // retries that carry an idempotency key
	FreshIdemKey  int64 // of those: the key has no lower attempt in the window (rotated)
}

// GatewayStats compares, for one agent, the requests that both an agent-side
// and a gateway-side observer reported (same http_request_id, or same
// message_id and attempt when there is no request id).
type GatewayStats struct {
	Agent         string
	Pairs         int64 // requests seen by both
	StatusDiffers int64 // different http_status
	BodyStripped  int64 // the agent's reply had a body, the gateway's had none
	Mangled       int64 // status differs or body stripped
	Rewrites      []Rewrite
}

// Rewrite counts pairs where the agent answered AgentStatus and the gateway
// passed on GatewayStatus.
type Rewrite struct {
	AgentStatus, GatewayStatus int
	N                          int64
}

// DeadLetterCount is the number of messages dead-lettered for Reason in the
// current window (outcomes_1m).
type DeadLetterCount struct {
	Reason string
	N      int64
}

// BaselineSummary is the part of the baseline that Gather reduces in
// ClickHouse instead of reading it bucket by bucket. With a summary,
// Input.Buckets holds only the callers whose own baseline can change a
// verdict (Config.NeedsOwnBaseline), all of them callers of the current
// window, and only their Total and Quota (Evaluate takes the agents'
// overload from the summary); the summary accounts for every other caller.
// Evaluate gives the same verdicts for it as for every bucket of every
// caller.
type BaselineSummary struct {
	// HistoryStart is the first baseline bucket with any reply (any agent,
	// any caller), or the span's BaselineEnd when there is none.
	HistoryStart int64
	Agents       []AgentBaseline // every agent with baseline buckets
}

// AgentBaseline summarizes one agent's baseline.
type AgentBaseline struct {
	Agent string
	// IdleCallers counts the callers with baseline buckets that are neither
	// in Input.Window nor in Input.Buckets: no reply in the current window.
	IdleCallers int
	// Overload is the agent's overload replies per baseline bucket (buckets
	// without any left out), each caller's counted as in Bucket.Overload;
	// it replaces the Overload of Input.Buckets.
	Overload []BucketCount
}

// BucketCount is a count in the baseline bucket that starts at Start.
type BucketCount struct {
	Start, N int64
}

// Input is everything one evaluation reads from ClickHouse.
type Input struct {
	Now         time.Time
	Buckets     []Bucket         // baseline: BaselineStart <= Start < BaselineEnd
	Baseline    *BaselineSummary // nil: Buckets holds every caller's buckets
	Window      []WindowCount    // current window
	Limits      []LimitCount
	Retries     []RetryStats // Gather leaves out callers too quiet to be flagged (see Reader.retries)
	Gateways    []GatewayStats
	DeadLetters []DeadLetterCount
	Accepted    int64 // messages accepted into errors in the current window
}
