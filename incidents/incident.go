package incidents

import (
	"fmt"
	"time"
)

// Kind is what the alerter decided (the column kind).
type Kind string

// The kinds of episode. Quota alone is not one: a caller over its own
// limit is the limiter working (docs/alerting.md).
const (
	Overload        Kind = "overload"         // the agent fails for everyone (page)
	Runaway         Kind = "runaway"          // one caller far above its own past or its peers
	LimitTooLow     Kind = "limit_too_low"    // quota rejections rose for most callers at once
	RetryStorm      Kind = "retry_storm"      // one caller retries badly (Reason says how)
	GatewayMangling Kind = "gateway_mangling" // a gateway rewrites the agent's error replies
	UntypedErrors   Kind = "untyped_errors"   // most replies cannot tell a quota from a crash
	Undecided       Kind = "undecided"        // too little history to decide Reason (limit_too_low or runaway)
)

// Kinds lists every kind, in the order pages show them.
var Kinds = []Kind{Overload, Runaway, LimitTooLow, RetryStorm, GatewayMangling, UntypedErrors, Undecided}

// ParseKind returns the kind named s, or an error naming the valid ones.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown incident kind %q (want one of %v)", s, Kinds)
}

// Incident is one episode: the latest write of one row of incidents.
//
// The figures are the episode's peaks over the evaluations that found it
// (by any alerter that wrote it): PeakRate is the verdict's rate in
// replies per second (overload replies, a runaway caller's errors, quota
// rejections, all errors for untyped); BaselineRate what that rate was
// compared with at the peak; PeakScore the verdict's ratio (a runaway's
// multiple of its baseline, a retry storm's or gateway's share, the untyped
// share); PeakCallers the callers involved (overloaded, rising, undecided);
// PeakCount the evidence replies in one window (overload replies, bad
// retries, mangled replies, untyped replies).
type Incident struct {
	Kind   Kind   `json:"kind"`
	Agent  string `json:"agent"`
	Caller string `json:"caller,omitempty"` // runaway and retry_storm only
	// Reason: retry_storm's reason (ignored_retry_after, rotated_message_id,
	// rotated_idempotency_key), undecided's verdict (limit_too_low, runaway).
	Reason string `json:"reason,omitempty"`

	// Start is the first evaluation that found the verdict; Fired the one
	// at which it had held as long as its alert's "for" (when the episode
	// was first written, about when its alert fired).
	Start    time.Time `json:"start"`
	Fired    time.Time `json:"fired"`
	LastSeen time.Time `json:"last_seen"`
	End      time.Time `json:"end,omitzero"` // zero while open

	// Detail: what a runaway caller was compared with (own_baseline, peers).
	Detail       string  `json:"detail,omitempty"`
	PeakRate     float64 `json:"peak_rate"`
	BaselineRate float64 `json:"baseline_rate"`
	PeakScore    float64 `json:"peak_score"`
	PeakCallers  uint32  `json:"peak_callers"`
	PeakCount    uint64  `json:"peak_count"`
	Evaluations  uint32  `json:"evaluations"` // evaluations that found it, by every alerter that wrote it
	Writer       string  `json:"writer,omitempty"`
	Version      uint64  `json:"-"`
}

// Open reports whether the episode had not ended at its latest write.
func (i Incident) Open() bool { return i.End.IsZero() }

// Key is the identity of an episode's verdict: one open episode per key.
type Key struct {
	Kind                  Kind
	Agent, Caller, Reason string
}

// Key returns the identity of i's verdict.
func (i Incident) Key() Key { return Key{i.Kind, i.Agent, i.Caller, i.Reason} }

// Duration is how long the episode lasted, or has lasted up to its last
// evaluation while open.
func (i Incident) Duration() time.Duration {
	if i.Open() {
		return i.LastSeen.Sub(i.Start)
	}
	return i.End.Sub(i.Start)
}

// At reports whether the episode was under way at t: started at or before
// t and not ended by then. An open one is under way until an alerter ends
// it (one nobody wrote for alerter.IncidentGap is ended at its last
// evaluation by the next alerter that evaluates).
func (i Incident) At(t time.Time) bool {
	if t.Before(i.Start) {
		return false
	}
	return i.Open() || t.Before(i.End)
}
