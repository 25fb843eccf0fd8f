package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// runReport executes `errtrail report [AGENT]`.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommon("report", stderr)
	out := addOutput(c)
	since := c.fs.Duration("since", 24*time.Hour, "report on the replies of this long before --to")
	toFlag := c.fs.String("to", "", "end of the range, RFC 3339 (default: now)")
	fromFlag := c.fs.String("from", "", "start of the range, RFC 3339 (overrides --since)")
	c.fs.Usage = func() {
		fmt.Fprint(c.fs.Output(), `usage: errtrail report [AGENT] [flags]

Flags may come before or after AGENT.
Prints which rules of its protocol AGENT's error replies broke in the range
(every agent's without AGENT): how many replies, their share, an example to
look up, the sentence of the seed or spec each rule comes from and what to
change.

`)
		c.fs.PrintDefaults()
	}
	if code, done := parseOrExit(c, args, stderr); done {
		return code
	}
	if c.fs.NArg() > 1 {
		fmt.Fprintln(stderr, "errtrail report: want at most one AGENT (see --help)")
		return exitUsage
	}
	to := time.Now()
	var err error
	if *toFlag != "" {
		if to, err = time.Parse(time.RFC3339, *toFlag); err != nil {
			fmt.Fprintln(stderr, "errtrail report: --to: want RFC 3339, e.g. 2026-12-01T12:00:00Z")
			return exitUsage
		}
	}
	from := to.Add(-*since)
	if *fromFlag != "" {
		if from, err = time.Parse(time.RFC3339, *fromFlag); err != nil {
			fmt.Fprintln(stderr, "errtrail report: --from: want RFC 3339, e.g. 2026-12-01T00:00:00Z")
			return exitUsage
		}
	}
	p, err := out.printer(stdout)
	if err != nil {
		fmt.Fprintln(stderr, "errtrail report:", err)
		return exitUsage
	}
	conn, err := c.connect()
	if err != nil {
		fmt.Fprintln(stderr, "errtrail report:", err)
		return exitUsage
	}
	defer conn.Close()
	_, rep := c.services(conn, nil)
	ctx, cancel := context.WithTimeout(ctx, *c.timeout)
	defer cancel()
	r, err := rep.Report(ctx, c.fs.Arg(0), from, to)
	if err != nil {
		fmt.Fprintln(stderr, "errtrail report:", err)
		var unavail *lookup.UnavailableError
		var config *lookup.ConfigError
		switch {
		case errors.As(err, &unavail):
			return exitUnavailable
		case errors.As(err, &config):
			return exitConfig
		}
		if errors.Is(err, report.ErrUnknownAgent) {
			return exitNotFound
		}
		return exitUsage
	}
	if *out.json {
		err = writeJSON(stdout, r)
	} else {
		err = p.Report(r)
	}
	if err != nil {
		fmt.Fprintln(stderr, "errtrail report:", err)
		return exitFailed
	}
	return exitOK
}
