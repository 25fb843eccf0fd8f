package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/errtrail/errtrail/internal/textout"
	"github.com/errtrail/errtrail/lookup"
)

// output are the flags of the commands that print an answer.
type output struct {
	json  *bool
	color *string
}

func addOutput(c *common) output {
	return output{
		json:  c.fs.Bool("json", false, "print the answer as JSON (the HTTP API's shape) instead of text"),
		color: c.fs.String("color", "auto", "auto (only on a terminal, and not with NO_COLOR set), always or never"),
	}
}

func (o output) printer(w io.Writer) (textout.Printer, error) {
	switch *o.color {
	case "always":
		return textout.Printer{W: w, Color: true}, nil
	case "never":
		return textout.Printer{W: w}, nil
	case "auto":
		return textout.Printer{W: w, Color: isTerminal(w) && os.Getenv("NO_COLOR") == ""}, nil
	}
	return textout.Printer{}, fmt.Errorf("--color %q: want auto, always or never", *o.color)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// runLookup executes `errtrail lookup ID`: the story of one error reply, or
// a one-line reason on stderr and a non-zero exit status.
func runLookup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommon("lookup", stderr)
	out := addOutput(c)
	agent := c.fs.String("agent", "", "the agent that answered: needed for a JSON-RPC id, narrows any other id")
	eventID := c.fs.String("event-id", "", "pick one of several replies that carry the id")
	traceURL := traceURLFlag(c)
	c.fs.Usage = func() {
		fmt.Fprint(c.fs.Output(), `usage: errtrail lookup ID [flags]

Flags may come before or after ID; an ID that begins with "-" goes after
"--". Prints what errtrail knows of the error reply that carries ID (an error_id,
request_id, event_id, message_id or task_id as the customer quotes it, or a
JSON-RPC id with --agent): what it means, the record, the attempts of the
same request, the caller's context at that moment and the findings. Exit
status 1 when no stored reply carries ID, 3 when several distinct replies do
(they are listed, with who observed each), 4 when ClickHouse cannot be asked
(retry later), 6 when it refuses the configuration (no such database or
table, unknown user, wrong password: fix the flags or run ingest migrate).

`)
		c.fs.PrintDefaults()
	}
	if code, done := parseOrExit(c, args, stderr); done {
		return code
	}
	if c.fs.NArg() != 1 {
		fmt.Fprintln(stderr, "errtrail lookup: want exactly one ID (see --help)")
		return exitUsage
	}
	p, err := out.printer(stdout)
	if err == nil {
		p.Trace, err = traceURL()
	}
	if err != nil {
		fmt.Fprintln(stderr, "errtrail lookup:", err)
		return exitUsage
	}
	conn, err := c.connect()
	if err != nil {
		fmt.Fprintln(stderr, "errtrail lookup:", err)
		return exitUsage
	}
	defer conn.Close()
	finder, _ := c.services(conn, c.redactor(func(s string) { fmt.Fprintln(stderr, "errtrail lookup: warning:", s) }))
	ctx, cancel := context.WithTimeout(ctx, *c.timeout)
	defer cancel()
	story, err := finder.Story(ctx, c.fs.Arg(0), lookup.FindOptions{Agent: *agent, EventID: *eventID})
	if err != nil {
		return lookupFailed(err, *out.json, p, stdout, stderr)
	}
	if *out.json {
		err = writeJSON(stdout, story)
	} else {
		err = p.Story(story)
	}
	if err != nil {
		fmt.Fprintln(stderr, "errtrail lookup:", err)
		return exitFailed
	}
	return exitOK
}

// lookupFailed prints the one-line reason of a lookup that gave no story
// (and the matches of an ambiguous id) and returns the exit status. No line
// quotes the id.
func lookupFailed(err error, asJSON bool, p textout.Printer, stdout, stderr io.Writer) int {
	var amb *lookup.AmbiguousError
	var bad *lookup.BadIDError
	var unavail *lookup.UnavailableError
	var config *lookup.ConfigError
	switch {
	case errors.Is(err, lookup.ErrNotFound):
		fmt.Fprintln(stderr, "errtrail lookup: not found:", err)
		return exitNotFound
	case errors.As(err, &amb):
		if asJSON {
			_ = writeJSON(stdout, map[string]any{"matches": amb.Matches, "total": amb.Total, "replies": amb.Replies})
		} else {
			_ = p.Matches(amb.Matches, amb.Total, amb.Replies)
		}
		fmt.Fprintln(stderr, "errtrail lookup:", err)
		return exitAmbiguous
	case errors.As(err, &bad):
		fmt.Fprintln(stderr, "errtrail lookup:", err)
		return exitUsage
	case errors.As(err, &unavail):
		fmt.Fprintln(stderr, "errtrail lookup:", err)
		return exitUnavailable
	case errors.As(err, &config):
		fmt.Fprintln(stderr, "errtrail lookup:", err)
		return exitConfig
	}
	fmt.Fprintln(stderr, "errtrail lookup:", err)
	return exitFailed
}

// parseOrExit parses the flags; done says the command should return code
// (after --help: 0; bad flags: 2).
func parseOrExit(c *common, args []string, stderr io.Writer) (code int, done bool) {
	err := c.parse(args)
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		return exitOK, true
	}
	if c.fs.Parsed() {
		fmt.Fprintf(stderr, "%s: %v\n", c.fs.Name(), err)
	} // else the flag package printed it with the usage
	return exitUsage, true
}
