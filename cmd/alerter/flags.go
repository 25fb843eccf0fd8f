package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/internal/cliflags"
	"github.com/errtrail/errtrail/internal/cmdkit"
)

// options are the alerter's settings once flags and environment are read
// and checked.
type options struct {
	listen       string
	ch           *cmdkit.ClickHouse // the connection (cmdkit.ClickHouse.Open); its password is never logged
	chAddr       []string
	chDB, chUser string
	chTLS        *tls.Config
	interval     time.Duration
	timeout      time.Duration
	staleAfter   time.Duration
	log          *cmdkit.Log
	cfg          alerter.Config
	links        alerter.Links
	incidents    bool     // record episodes in the incidents table
	writer       string   // names this alerter in the incident rows
	deprecations []string // notices of deprecated names used, to log once
}

// envKeys returns the variables flag name reads, in order of precedence:
// ERRTRAIL_ALERTER_<NAME> (NAME upper-cased, '.' and '-' as '_'), then, for
// a flag ingest has too, ingest's ERRTRAIL_<NAME>. The alerter's own
// variable comes first so that one environment can give the alerter other
// credentials than ingest (a read-only user), and so that deployments that
// set ERRTRAIL_ALERTER_CLICKHOUSE_* keep working unchanged.
func envKeys(name string) []string {
	return cliflags.EnvNames("ERRTRAIL_ALERTER_", name, "clickhouse.", "log.")
}

// parseFlags reads the command line, then the environment, and checks the
// result. --help prints the usage to stderr and returns flag.ErrHelp. No
// output and no error contains the ClickHouse password.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("alerter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := cliflags.New(fs)
	o := &options{cfg: alerter.DefaultConfig()}

	listen := fs.String("http.listen-address", "127.0.0.1:19101", "address of /metrics, /healthz and /readyz")
	o.ch = cmdkit.AddClickHouse(f, "", cmdkit.ClickHouseHelp{
		User: "ClickHouse user: SELECT on errtrail's tables, INSERT on incidents (docs/operations.md)"})
	fs.DurationVar(&o.interval, "evaluation.interval", 10*time.Second, "time between evaluations (the overload all-clear takes --overload.clear-after plus up to this, plus Prometheus's scrape and rule intervals)")
	fs.DurationVar(&o.timeout, "evaluation.timeout", 10*time.Second, "deadline of one evaluation's queries")
	fs.DurationVar(&o.staleAfter, "evaluation.stale-after", 60*time.Second, "withhold verdict series when the latest successful evaluation is older than this")
	o.log = cmdkit.AddLog(f, "")
	grafanaURL := fs.String("links.grafana-url", "http://localhost:3000", "base URL of the Grafana with errtrail's dashboards, for the alerts' dashboard links (exported in errtrail_alerter_links_info)")
	lookupURL := fs.String("links.lookup-url", "", "base URL of errtrail's support lookup page, for links to one error_id (exported in errtrail_alerter_links_info)")
	incidents := fs.Bool("incidents.enabled", true, "record each verdict's episodes in the incidents table (needs INSERT on it, docs/operations.md); false keeps the alerter read-only")
	writer := fs.String("incidents.writer", defaultWriter(), "name of this alerter in the incident rows it writes (default the host name)")
	o.cfg.RegisterFlags(fs)
	f.Deprecated("stale-after", "evaluation.stale-after")
	fs.VisitAll(func(fl *flag.Flag) { f.Env(fl.Name, envKeys(fl.Name)...) })

	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `usage: alerter [flags]

A flag not given on the command line reads the variables listed after it,
the first one set winning: ERRTRAIL_ALERTER_<FLAG> (upper case, '.' and '-'
as '_'), then, for the --clickhouse.* and --log.* flags that ingest has too,
ingest's ERRTRAIL_<FLAG>. See docs/alerting.md.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, cmdkit.Shown{Err: err}
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (the alerter takes flags only)", fs.Arg(0))
	}
	if err := f.Resolve(); err != nil {
		return nil, err
	}
	o.deprecations = f.Deprecations()

	o.listen = *listen
	o.incidents, o.writer = *incidents, *writer
	// A database name that can never work stops here, not in every
	// evaluation.
	if err := o.ch.Check(); err != nil {
		return nil, err
	}
	o.chAddr, o.chDB, o.chUser, o.chTLS = o.ch.Addrs, *o.ch.Database, *o.ch.User, o.ch.TLSConfig
	if o.interval <= 0 || o.timeout <= 0 || o.staleAfter <= 0 {
		return nil, errors.New("--evaluation.interval, --evaluation.timeout and --evaluation.stale-after must be positive")
	}
	if err := o.log.Check(); err != nil {
		return nil, err
	}
	if err := o.cfg.Validate(); err != nil {
		return nil, err
	}
	var err error
	if o.links.GrafanaURL, err = cliflags.BaseURL("links.grafana-url", *grafanaURL); err != nil {
		return nil, err
	}
	if o.links.LookupURL, err = cliflags.BaseURL("links.lookup-url", *lookupURL); err != nil {
		return nil, err
	}
	return o, nil
}

// defaultWriter is the host name, or "alerter" when it cannot be read.
func defaultWriter() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "alerter"
}
