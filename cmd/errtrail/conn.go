package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/internal/chdial"
	"github.com/errtrail/errtrail/internal/cliflags"
	"github.com/errtrail/errtrail/internal/redactkey"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/redact"
	"github.com/errtrail/errtrail/report"
	"github.com/errtrail/errtrail/schema"
)

// common are the settings every subcommand shares: where ClickHouse is,
// with which (read-only) user, the deployment's redaction key (to hash an id
// the way ingest stored it), the query deadline and the logs.
type common struct {
	fs       *flag.FlagSet
	f        *cliflags.Flags
	chAddr   *string
	chDB     *string
	chUser   *string
	chPass   *string // never logged
	chTLS    cliflags.TLS
	keyFile  *string
	timeout  *time.Duration
	logLevel *string
	logFmt   *string
	storms   *bool
	budget   *time.Duration
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
	return &common{
		fs:       fs,
		f:        f,
		chAddr:   fs.String("clickhouse.addr", "127.0.0.1:19000", "ClickHouse native-protocol addresses host:port, comma-separated"),
		chDB:     fs.String("clickhouse.database", "errtrail", "database holding errtrail's tables"),
		chUser:   fs.String("clickhouse.user", "default", "ClickHouse user: a read-only one suffices (docs/operations.md)"),
		chPass:   f.Secret("clickhouse.password", "", "ClickHouse password (never logged; prefer the environment)"),
		chTLS:    f.TLS("clickhouse", "", "ClickHouse"),
		keyFile:  fs.String("redact.key-file", "", "the deployment's redaction key, to find ids stored as their keyed hash (default: "+redactkey.DefaultPath()+"; without it ids are looked up as given only)"),
		timeout:  fs.Duration("query.timeout", 10*time.Second, "deadline of one answer's queries"),
		logLevel: fs.String("log.level", "info", "debug, info, warn or error"),
		logFmt:   fs.String("log.format", "text", "text or json"),
		storms:   fs.Bool("context.retry-storms", false, "add the alerter's retry-storm verdict to a story's context (one more read of the hour's retries; the attempts show the request's own retries either way)"),
		budget:   fs.Duration("context.verdict-budget", 0, "answer a story without the verdicts when they take longer than this (0: wait for them, up to the query timeout)"),
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
	if err := schema.ValidDatabase(*c.chDB); err != nil {
		return err
	}
	if len(cliflags.SplitList(*c.chAddr)) == 0 {
		return errors.New("--clickhouse.addr names no address")
	}
	if *c.timeout <= 0 {
		return errors.New("--query.timeout must be positive")
	}
	return nil
}

func (c *common) logger(w io.Writer) (*slog.Logger, error) {
	return cliflags.Logger(w, *c.logLevel, *c.logFmt)
}

// connect opens the ClickHouse pool. Opening does not dial: an unreachable
// server shows as lookup.UnavailableError on the first question.
func (c *common) connect() (driver.Conn, error) {
	return c.connectPool(*c.chAddr, 0)
}

// connectPool opens a pool of at most maxOpen connections (0: the
// driver's default, 10) to addrs (comma-separated).
func (c *common) connectPool(addrs string, maxOpen int) (driver.Conn, error) {
	var tc *tls.Config
	tc, err := c.chTLS.Config()
	if err != nil {
		return nil, fmt.Errorf("clickhouse TLS: %w", err)
	}
	return clickhouse.Open(&clickhouse.Options{
		Addr:         cliflags.SplitList(addrs),
		MaxOpenConns: maxOpen,
		MaxIdleConns: maxOpen,
		Protocol:     clickhouse.Native,
		Auth:         clickhouse.Auth{Database: "default", Username: *c.chUser, Password: *c.chPass},
		DialContext:  (&chdial.Dialer{Timeout: 5 * time.Second, WriteTimeout: *c.timeout, TLS: tc}).DialContext,
		DialTimeout:  5 * time.Second,
		ReadTimeout:  *c.timeout,
	})
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
