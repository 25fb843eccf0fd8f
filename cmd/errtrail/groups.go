package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/lookup"
)

// runGroups executes `errtrail groups AGENT`: the agent's error groups in
// a range, the latest seen first, each new one and regression said why.
func runGroups(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommon("groups", stderr)
	jsonOut := c.fs.Bool("json", false, "print the answer as JSON (the HTTP API's shape) instead of text")
	newOnly := c.fs.Bool("new", false, "only the groups new in the last hour (first seen then, on an agent seen for an hour before)")
	version := c.fs.String("version", "", "only the groups seen with this agent version (source.version)")
	since := c.fs.Duration("since", 7*24*time.Hour, "groups seen in this long before --to")
	toFlag := c.fs.String("to", "", "end of the range, RFC 3339 (default: now)")
	c.fs.Usage = func() {
		fmt.Fprint(c.fs.Output(), `usage: errtrail groups AGENT [flags]

Prints the agent's error groups (docs/record.md, "Error groups"): one line
per (protocol, code or reason, kind, method) with its errors, distinct
callers, first and last seen, the agent versions it was seen with and one
example id (for errtrail lookup). STATE is "new" (first seen in the last
hour, after an hour of the agent's history) or "regression" (back after
24 h of silence, or in a newer version after a version without it).

`)
		c.fs.PrintDefaults()
	}
	if code, done := parseOrExit(c, args, stderr); done {
		return code
	}
	if c.fs.NArg() != 1 {
		fmt.Fprintln(stderr, "errtrail groups: want one AGENT (see --help)")
		return exitUsage
	}
	f := groups.Filter{Agent: c.fs.Arg(0), NewOnly: *newOnly, Version: *version, To: time.Now()}
	if *toFlag != "" {
		t, err := time.Parse(time.RFC3339, *toFlag)
		if err != nil {
			fmt.Fprintln(stderr, "errtrail groups: --to: want RFC 3339, e.g. 2026-12-01T12:00:00Z")
			return exitUsage
		}
		f.To = t
	}
	if *since <= 0 || *since > 90*24*time.Hour {
		fmt.Fprintln(stderr, "errtrail groups: --since: want more than 0 and at most 90 days (2160h)")
		return exitUsage
	}
	f.From = f.To.Add(-*since)
	conn, err := c.connect()
	if err != nil {
		fmt.Fprintln(stderr, "errtrail groups:", err)
		return exitUsage
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, *c.timeout)
	defer cancel()
	list, err := groups.Read(ctx, conn, *c.chDB, f)
	if err != nil {
		if errors.Is(err, groups.ErrBadFilter) {
			fmt.Fprintln(stderr, "errtrail groups:", err)
			return exitUsage
		}
		err = lookup.StoreError(err)
		fmt.Fprintln(stderr, "errtrail groups:", err)
		var config *lookup.ConfigError
		if errors.As(err, &config) {
			return exitConfig
		}
		return exitUnavailable
	}
	if *jsonOut {
		err = writeJSON(stdout, map[string]any{"agent": f.Agent, "groups": list, "from": f.From.UTC(), "to": f.To.UTC()})
	} else {
		err = groups.WriteText(stdout, list)
	}
	if err != nil {
		fmt.Fprintln(stderr, "errtrail groups:", err)
		return exitFailed
	}
	return exitOK
}

// groupStore is the api's groups.Reader: the store's failures as lookup's
// errors, so that /v1/agents/{agent}/groups answers them as the other
// routes do.
type groupStore struct{ groups.Store }

func (s groupStore) Groups(ctx context.Context, f groups.Filter) ([]groups.Group, error) {
	list, err := s.Store.Groups(ctx, f)
	if err != nil && !errors.Is(err, groups.ErrBadFilter) && ctx.Err() == nil {
		err = lookup.StoreError(err)
	}
	return list, err
}
