package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/lookup"
)

// runIncidents executes `errtrail incidents`: the alerter's episodes in a
// range, the latest first.
func runIncidents(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommon("incidents", stderr)
	jsonOut := c.fs.Bool("json", false, "print the answer as JSON (the HTTP API's shape) instead of text")
	agent := c.fs.String("agent", "", "only this agent's episodes")
	kind := c.fs.String("kind", "", "only episodes of this kind (overload, runaway, limit_too_low, retry_storm, gateway_mangling, untyped_errors, undecided)")
	openOnly := c.fs.Bool("open", false, "only the episodes still open")
	since := c.fs.Duration("since", 7*24*time.Hour, "episodes under way in this long before --to")
	toFlag := c.fs.String("to", "", "end of the range, RFC 3339 (default: now)")
	fromFlag := c.fs.String("from", "", "start of the range, RFC 3339 (overrides --since)")
	limit := c.fs.Int("limit", 200, "at most this many episodes, the latest first")
	c.fs.Usage = func() {
		fmt.Fprint(c.fs.Output(), `usage: errtrail incidents [flags]

Prints the episodes the alerter recorded (docs/alerting.md, "Incidents"):
each verdict (overload, runaway caller, limit too low, retry storm, gateway
mangling, untyped errors, undecided) from its first evaluation to its last,
with its peak figures. Quota alone is never an incident.

`)
		c.fs.PrintDefaults()
	}
	if code, done := parseOrExit(c, args, stderr); done {
		return code
	}
	if c.fs.NArg() > 0 {
		fmt.Fprintln(stderr, "errtrail incidents: takes no argument (use --agent; see --help)")
		return exitUsage
	}
	f := incidents.Filter{Agent: *agent, OpenOnly: *openOnly, Limit: *limit}
	if *kind != "" {
		k, err := incidents.ParseKind(*kind)
		if err != nil {
			fmt.Fprintln(stderr, "errtrail incidents: --kind:", err)
			return exitUsage
		}
		f.Kind = k
	}
	if *limit < 1 || *limit > 10000 {
		fmt.Fprintln(stderr, "errtrail incidents: --limit: want 1 to 10000")
		return exitUsage
	}
	f.To = time.Now()
	var err error
	if *toFlag != "" {
		if f.To, err = time.Parse(time.RFC3339, *toFlag); err != nil {
			fmt.Fprintln(stderr, "errtrail incidents: --to: want RFC 3339, e.g. 2026-12-01T12:00:00Z")
			return exitUsage
		}
	}
	f.From = f.To.Add(-*since)
	if *fromFlag != "" {
		if f.From, err = time.Parse(time.RFC3339, *fromFlag); err != nil {
			fmt.Fprintln(stderr, "errtrail incidents: --from: want RFC 3339, e.g. 2026-12-01T00:00:00Z")
			return exitUsage
		}
	}
	if !f.From.Before(f.To) {
		fmt.Fprintln(stderr, "errtrail incidents: --from must be before --to")
		return exitUsage
	}
	conn, err := c.connect()
	if err != nil {
		fmt.Fprintln(stderr, "errtrail incidents:", err)
		return exitUsage
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, *c.timeout)
	defer cancel()
	list, err := incidents.Read(ctx, conn, *c.chDB, f)
	if err != nil {
		if errors.Is(err, incidents.ErrBadFilter) {
			fmt.Fprintln(stderr, "errtrail incidents:", err)
			return exitUsage
		}
		err = lookup.StoreError(err)
		fmt.Fprintln(stderr, "errtrail incidents:", err)
		var config *lookup.ConfigError
		if errors.As(err, &config) {
			return exitConfig
		}
		return exitUnavailable
	}
	if *jsonOut {
		if list == nil {
			list = []incidents.Incident{}
		}
		err = writeJSON(stdout, map[string]any{"incidents": list})
	} else {
		err = incidents.WriteText(stdout, list)
	}
	if err != nil {
		fmt.Fprintln(stderr, "errtrail incidents:", err)
		return exitFailed
	}
	return exitOK
}

// incidentStore is the api's incidents.Reader: the store's failures as
// lookup's errors (unavailable, or a configuration the server refused), so
// that /v1/incidents answers them as the other routes do.
type incidentStore struct{ incidents.Store }

func (s incidentStore) Incidents(ctx context.Context, f incidents.Filter) ([]incidents.Incident, error) {
	list, err := s.Store.Incidents(ctx, f)
	if err != nil && !errors.Is(err, incidents.ErrBadFilter) && ctx.Err() == nil {
		err = lookup.StoreError(err)
	}
	return list, err
}
