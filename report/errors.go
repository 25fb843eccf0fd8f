package report

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// BadRangeError: the caller asked for a range the report does not serve
// (unset, empty, reversed, outside ClickHouse's DateTime, or longer
// than MaxRange). It is the caller's
// mistake; the HTTP layer answers 400 with Error() as the message.
//
// Failures of ClickHouse itself come back as *schema.UnavailableError (503),
// the same type the support lookup uses, so one mapping serves both; an
// answer of the server that the configuration is wrong (no such database
// or table, unknown user, wrong password) as *schema.ConfigError. Any
// other error (an invalid Database name) is a configuration mistake of the
// server (500). A cancelled or expired ctx comes back as ctx.Err().
type BadRangeError struct {
	From, To time.Time
	Reason   string
}

func (e *BadRangeError) Error() string {
	return fmt.Sprintf("report: bad range [%s, %s): %s",
		e.From.UTC().Format(time.RFC3339), e.To.UTC().Format(time.RFC3339), e.Reason)
}

// ErrUnknownAgent: the report of one agent that errtrail has stored no
// error reply of, in the range or before (HTTP 404). A known agent without
// replies in the range has a report with Replies 0.
var ErrUnknownAgent = errors.New("report: errtrail has stored no error reply of this agent")

// CheckRange reports a range Report refuses, as a *BadRangeError.
func CheckRange(from, to time.Time) error {
	bad := func(reason string) error { return &BadRangeError{From: from, To: to, Reason: reason} }
	switch {
	case from.IsZero() || to.IsZero():
		return bad("both from and to are required")
	case from.Unix() < 0:
		return bad("from is before 1970")
	case to.Unix() > math.MaxUint32:
		return bad("to is after 2106 (ClickHouse DateTime)")
	case !from.Before(to):
		return bad("from must be before to")
	case to.Sub(from) > MaxRange:
		return bad(fmt.Sprintf("longer than %d days", int(MaxRange/(24*time.Hour))))
	}
	return nil
}
