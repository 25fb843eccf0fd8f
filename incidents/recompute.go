package incidents

import (
	"context"
	"time"
)

// The reasons of a retry storm (Incident.Reason of RetryStorm): the
// alerter's verdicts and the support story's retry rules share them.
const (
	ReasonIgnoredRetryAfter = "ignored_retry_after"
	ReasonRotatedMessageID  = "rotated_message_id"
	ReasonRotatedIdemKey    = "rotated_idempotency_key"
)

// Recomputer says what the alerter finds of one agent at one second,
// computed afresh from the stored errors rather than read from the
// incidents: for the moments in which no alerter was recording
// (Moment.Recording false). The alerter implements it (alerter.Recomputer);
// the read side takes this interface, so that it never imports the
// alerter.
type Recomputer interface {
	Recompute(ctx context.Context, q Recompute) (Moment, error)
}

// Recompute asks for one agent's verdicts at one second.
type Recompute struct {
	Agent string
	At    time.Time
	// RetryStorms also judges the agent's callers' retries (a read of the
	// agent's raw rows over the retry window); without it the Moment holds
	// no RetryStorm episode, whatever the callers did.
	RetryStorms bool
	// QueryIDPrefix, if set, names each query in system.query_log.
	QueryIDPrefix string
	// Observe, if set, is told each query's name, rows read, duration and
	// error, one call at a time.
	Observe func(query string, rows uint64, took time.Duration, err error)
}

// The answer of a Recomputer is a Moment with Recording true and, as
// Incidents, the verdicts found at Recompute.At, each dated At: Overload,
// LimitTooLow and Undecided (too little history to judge the agent's
// callers against their past) of the agent, Runaway and RetryStorm of each
// flagged caller. Its figures (PeakRate and the like) are left zero.
