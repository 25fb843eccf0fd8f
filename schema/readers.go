package schema

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// This file holds what every reader of errtrail's tables needs besides the
// table names (render.go): the check of a database name before it is
// formatted into SQL, and the sorting of the store's failures into the two
// answers a person can act on: the store is unavailable (an outage, a
// timeout: retry later), or it answered that errtrail is configured wrong
// for it (no such database, table or column, an unknown user or a wrong
// password, no permission: retrying cannot help; fix the flags or run
// ingest migrate).

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidDatabase reports a database name that cannot be formatted into SQL:
// only plain identifiers (letters, digits, underscores, not starting with a
// digit) can, since ClickHouse does not bind names.
func ValidDatabase(db string) error {
	if !identRE.MatchString(db) {
		return fmt.Errorf("schema: database name %q is not a plain identifier", db)
	}
	return nil
}

// UnavailableError: ClickHouse could not be asked (an outage, a timeout).
// Err never quotes an id the reader was asked for (StoreError cuts them
// out).
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return "the error store is unavailable: " + e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// ConfigError: the store answered, and what it said is a configuration
// mistake of this errtrail, not an outage. Hint says what to check; Err is
// the server's answer with the ids cut out.
type ConfigError struct {
	Hint string
	Err  error
}

func (e *ConfigError) Error() string {
	return "the error store refused the configuration: " + e.Hint + " (" + e.Err.Error() + ")"
}
func (e *ConfigError) Unwrap() error { return e.Err }

// configHints are the ClickHouse error codes that mean a configuration
// mistake, with what to check.
var configHints = map[int32]string{
	81:  "the database does not exist: check --clickhouse.database, or create errtrail's tables with ingest migrate",
	60:  "a table errtrail reads is missing: run ingest migrate on this database",
	47:  "a column errtrail reads is missing (the schema is older than this errtrail): run ingest migrate on this database",
	192: "ClickHouse does not know the user: check --clickhouse.user",
	193: "ClickHouse refused the password: check the password (ERRTRAIL_LOOKUP_CLICKHOUSE_PASSWORD)",
	194: "ClickHouse wants a password for the user: set ERRTRAIL_LOOKUP_CLICKHOUSE_PASSWORD",
	195: "the user may not connect from this address: check the user's networks on the server",
	516: "ClickHouse refused the user or the password: check --clickhouse.user and ERRTRAIL_LOOKUP_CLICKHOUSE_PASSWORD",
	497: "the user may not read errtrail's tables: grant SELECT on them (docs/lookup.md, a read-only ClickHouse user)",
	291: "the user may not read this database: grant SELECT on it (docs/lookup.md, a read-only ClickHouse user)",
}

// configHint returns the hint for err when the server's answer (err or one
// it wraps) is a configuration mistake.
func configHint(err error) (string, bool) {
	var ex *clickhouse.Exception
	if !errors.As(err, &ex) {
		return "", false
	}
	h, ok := configHints[ex.Code]
	return h, ok
}

// StoreError sorts a failure of the store: a *ConfigError when the server's
// answer is a configuration mistake, else an *UnavailableError. An error
// that is already one of them is returned as is. Each of ids (values a
// person asked for, such as a customer's request id) is cut out of the
// text, even where the server quoted the query; Unwrap still gives the
// cause for errors.Is (context.DeadlineExceeded, net errors).
func StoreError(err error, ids ...string) error {
	var ue *UnavailableError
	var ce *ConfigError
	if errors.As(err, &ue) || errors.As(err, &ce) {
		return err
	}
	msg := err.Error()
	hint, config := configHint(err)
	switch {
	case config:
	case errors.Is(err, context.DeadlineExceeded):
		msg = "timed out: " + msg
	case errors.Is(err, context.Canceled):
		msg = "canceled: " + msg
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			msg = "timed out: " + msg
		}
	}
	for _, id := range ids {
		if id != "" {
			msg = strings.ReplaceAll(msg, id, "[id]")
		}
	}
	if config {
		return &ConfigError{Hint: hint, Err: &scrubbed{msg: msg, cause: err}}
	}
	return &UnavailableError{Err: &scrubbed{msg: msg, cause: err}}
}

// scrubbed is an error whose text had the ids cut out; Unwrap still gives
// the cause.
type scrubbed struct {
	msg   string
	cause error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.cause }
