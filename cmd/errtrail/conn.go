package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/internal/cliflags"
	"github.com/errtrail/errtrail/internal/cmdkit"
	"github.com/errtrail/errtrail/internal/redactkey"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/redact"
	"github.com/errtrail/errtrail/report"
)

// common are the settings every subcommand shares: where ClickHouse is,
// with which (read-only) user, the deployment's redaction key (to hash an id
// the way ingest stored it), the query deadline and the logs.
type common struct {
	fs      *flag.FlagSet
	f       *cliflags.Flags
	ch      *cmdkit.ClickHouse // its password is never logged
	chAddr  *string            // ch's flags
	chDB    *string
	chUser  *string
	keyFile *string
	timeout *time.Duration
	log     *cmdkit.Log
	storms  *bool
	budget  *time.Duration
}

// envKeys: ERRTRAIL_LOOKUP_<FLAG>, then ingest's variable for the flags
// ingest has too (same name, same meaning).
func envKeys(name string) []string {
	return cliflags.EnvNames("ERRTRAIL_LOOKUP_", name, "clickhouse.", "log.", "redact.")
}

func newCommon(name string, stderr io.Writer) *common {
	fs := flag.NewFlagSet("errtrail "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := cliflags.New(fs)
	ch := cmdkit.AddClickHouse(f, "", cmdkit.ClickHouseHelp{User: "ClickHouse user: a read-only one suffices (docs/operations.md)"})
	return &common{
		fs:      fs,
		f:       f,
		ch:      ch,
		chAddr:  ch.Addr,
		chDB:    ch.Database,
		chUser:  ch.User,
		keyFile: fs.String("redact.key-file", "", "the deployment's redaction key, to find ids stored as their keyed hash (default: "+redactkey.DefaultPath()+"; without it ids are looked up as given only)"),
		timeout: fs.Duration("query.timeout", 10*time.Second, "deadline of one answer's queries"),
		log:     cmdkit.AddLog(f, ""),
		storms:  fs.Bool("context.retry-storms", false, "add the alerter's retry-storm verdict to a story's context (one more read of the hour's retries; the attempts show the request's own retries either way)"),
		budget:  fs.Duration("context.verdict-budget", 0, "answer a story without the verdicts when they take longer than this; their queries end on the server a second later (0: wait for them, up to the query timeout)"),
	}
}

// parse reads args, then the environment; every flag reads the variables
// envKeys names. Flags may come before or after the positional arguments
// (`lookup ID --clickhouse.addr …` as well as `lookup --clickhouse.addr …
// ID`); after "--" everything is positional (an id that begins with "-").
// c.fs.Args() then holds the positional arguments in order. It returns
// flag.ErrHelp after --help.
func (c *common) parse(args []string) error {
	c.fs.VisitAll(func(fl *flag.Flag) { c.f.Env(fl.Name, envKeys(fl.Name)...) })
	pos, err := parseInterleaved(c.fs, args)
	if err != nil {
		return err
	}
	// Leave the positional arguments where fs.Args() reports them.
	if err := c.fs.Parse(append([]string{"--"}, pos...)); err != nil {
		return err
	}
	if err := c.f.Resolve(); err != nil {
		return err
	}
	if err := c.ch.Check(); err != nil {
		return err
	}
	if *c.timeout <= 0 {
		return errors.New("--query.timeout must be positive")
	}
	return nil
}

func (c *common) logger(w io.Writer) (*slog.Logger, error) {
	if err := c.log.Check(); err != nil {
		return nil, err
	}
	return c.log.Logger(w), nil
}

// connect opens the ClickHouse pool. Opening does not dial: an unreachable
// server shows as lookup.UnavailableError on the first question.
func (c *common) connect() (driver.Conn, error) {
	return c.connectPool(*c.chAddr, 0)
}

// connectPool opens a pool of at most maxOpen connections (0: the
// driver's default, 10) to addrs (comma-separated), each answer and write
// bounded by --query.timeout (cmdkit.ClickHouse.Open).
func (c *common) connectPool(addrs string, maxOpen int) (driver.Conn, error) {
	return c.ch.Open(cmdkit.Pool{Addrs: cliflags.SplitList(addrs), MaxOpen: maxOpen, Timeout: *c.timeout})
}

// redactor returns the deployment's redactor, or nil when no key can be
// read (ids are then looked up as given only, which the warning says).
func (c *common) redactor(log func(string)) *redact.Redactor {
	key, used, _, err := redactkey.Load(*c.keyFile, false)
	if err != nil {
		if *c.keyFile != "" || !errors.Is(err, os.ErrNotExist) {
			log(fmt.Sprintf("redaction key %s unreadable (%v): ids stored as their keyed hash will not be found", used, err))
		}
		return nil
	}
	return redact.New(key)
}

// services returns the lookup and report services on conn. The story of
// a moment no alerter recorded computes the verdicts afresh with the
// alerter's code (alerter.Recomputer), at the alerter's defaults.
func (c *common) services(conn driver.Conn, red *redact.Redactor) (*lookup.Finder, *report.ClickHouse) {
	return &lookup.Finder{Conn: conn, Database: *c.chDB, Redactor: red, RetryStorms: *c.storms, VerdictBudget: *c.budget,
			Recompute: &alerter.Recomputer{Conn: conn, Database: *c.chDB}},
		&report.ClickHouse{Conn: conn, Database: *c.chDB}
}

// parseInterleaved parses fs from args, where flags and positional
// arguments may be mixed, and returns the positional arguments in order.
// The flag package stops at the first positional argument; this parses
// again after each one. A "--" that is not a flag's value ends the flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" && !isFlagValue(fs, args[:used-1]) {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// isFlagValue reports whether the argument after before is the value of a
// flag: before ends with "-name" or "--name" (no "=") of a flag that takes
// a value.
func isFlagValue(fs *flag.FlagSet, before []string) bool {
	if len(before) == 0 {
		return false
	}
	last := before[len(before)-1]
	if len(last) < 2 || last[0] != '-' || last == "--" || strings.Contains(last, "=") {
		return false
	}
	fl := fs.Lookup(strings.TrimPrefix(strings.TrimPrefix(last, "-"), "-"))
	if fl == nil {
		return false
	}
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}
