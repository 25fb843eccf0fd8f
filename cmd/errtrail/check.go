package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/errtrail/errtrail/conformance"
)

// Exit statuses of check (its own: it asks no server).
const (
	checkOK         = 0 // no MUST broken (advice may have been printed)
	checkViolation  = 1 // a reply breaks a MUST rule
	checkUnreadable = 2 // an input could not be read or decoded, or bad usage
)

const checkUsage = `usage: errtrail check [--json] FILE...

Checks each captured error reply (a raw HTTP/1.1 response, a gRPC reply text
form or event JSON; - reads stdin) against the rules of its protocol and
prints every rule it breaks, with the seed sentence and the fix. Needs no
Kafka or ClickHouse.

Exit status: 0 no MUST rule broken (SHOULD rules are advice), 1 a reply
breaks a MUST rule, 2 an input could not be read (this wins over 1).
`

// runCheck is `errtrail check`; conformance holds the logic.
func runCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per input, for scripts")
	maxBytes := fs.Int("max-bytes", 1<<20, "largest input accepted, in bytes")
	fs.Usage = func() { fmt.Fprint(stderr, checkUsage); fs.PrintDefaults() }
	files, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return checkOK
		}
		return checkUnreadable
	}
	if len(files) == 0 {
		fmt.Fprint(stderr, checkUsage)
		return checkUnreadable
	}
	c := conformance.NewChecker()
	code := checkOK
	for _, name := range files {
		var res conformance.Result
		data, err := readReply(name, stdin, *maxBytes)
		if err == nil {
			res, err = c.Check(data)
		}
		switch {
		case err != nil:
			code = checkUnreadable
		case res.Violations() > 0 && code == checkOK:
			code = checkViolation
		}
		write := conformance.WriteText
		if *asJSON {
			write = conformance.WriteJSON
		}
		if werr := write(stdout, name, &res, err); werr != nil {
			fmt.Fprintln(stderr, "errtrail check:", werr)
			return checkUnreadable
		}
	}
	return code
}

// readReply reads one input ("-" is stdin), one byte past max so that the
// decoder reports an oversized reply as too_large.
func readReply(name string, stdin io.Reader, max int) ([]byte, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return io.ReadAll(io.LimitReader(r, int64(max)+1))
}
