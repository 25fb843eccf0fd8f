package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/errtrail/errtrail/emit"
	"github.com/errtrail/errtrail/emit/kafkapub"
	"github.com/errtrail/errtrail/internal/cliflags"
	"github.com/errtrail/errtrail/internal/cmdkit"
)

// options are the tap's settings once flags and environment are read and
// checked.
type options struct {
	upstream      *url.URL
	upstreamHTTP2 bool
	upstreamIdle  int
	listen        string
	metricsListen string
	// The proxy server's timeouts: the request's header block, the gap
	// between two reads of a request body (not for gRPC streams), and an
	// idle keep-alive connection.
	headerTimeout   time.Duration
	bodyReadTimeout time.Duration
	idleTimeout     time.Duration
	brokers         []string
	topic           string
	agent           string
	source          emit.Source
	callerHeader    string
	requestID       string
	attempt         string
	idempotency     string
	log             *cmdkit.Log
}

// envKeys returns the variables flag name reads, in order of precedence:
// ERRTRAIL_TAP_<NAME> (upper case, '.' and '-' as '_'), then, for the
// --kafka.* and --log.* flags that ingest has too, ingest's ERRTRAIL_<NAME>.
func envKeys(name string) []string {
	return cliflags.EnvNames("ERRTRAIL_TAP_", name, "kafka.", "log.")
}

// parseFlags reads the command line, then the environment, and checks the
// result. --help prints the usage and returns flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("tap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := cliflags.New(fs)
	o := &options{}

	upstream := fs.String("upstream", "", "base URL of the agent (http://host:port), required")
	fs.BoolVar(&o.upstreamHTTP2, "upstream.http2", false, "speak HTTP/2 without TLS (h2c) to the upstream for every request, not only gRPC")
	fs.IntVar(&o.upstreamIdle, "upstream.max-idle-connections", 1024, "idle HTTP/1.1 connections kept open to the upstream, for reuse under load")
	fs.StringVar(&o.listen, "http.listen-address", "127.0.0.1:19110", "address the proxy listens on (HTTP/1.1 and h2c)")
	fs.StringVar(&o.metricsListen, "metrics.listen-address", "127.0.0.1:19111", "address of /metrics, /healthz and /readyz")
	fs.DurationVar(&o.headerTimeout, "http.read-header-timeout", 10*time.Second, "longest wait for a request's header block")
	fs.DurationVar(&o.bodyReadTimeout, "http.body-read-timeout", 30*time.Second, "longest wait for the next bytes of a request body (gRPC streams excepted); a stalled body is answered 408 and not published")
	fs.DurationVar(&o.idleTimeout, "http.idle-timeout", 2*time.Minute, "an idle keep-alive connection is closed after this")
	kafka := cmdkit.AddKafka(f, "")
	fs.StringVar(&o.topic, "kafka.topic", kafkapub.DefaultTopic, "topic the events are published to")
	fs.StringVar(&o.agent, "agent", "", "name of the agent behind the tap (the events' agent)")
	fs.StringVar(&o.source.ID, "source.id", "", "this tap's instance id (default: the host name)")
	fs.StringVar(&o.source.Kind, "source.kind", emit.KindAgent, "agent (the tap stands for the agent) or gateway")
	fs.StringVar(&o.source.Version, "source.version", "", "the agent's version (source.version of the events); default: the version of the upstream's A2A agent card, read at start, if it serves one")
	fs.StringVar(&o.callerHeader, "caller.header", "", "request header naming the caller (never a credential header)")
	fs.StringVar(&o.requestID, "request-id.header", "X-Request-Id", "request header with the request id")
	fs.StringVar(&o.attempt, "attempt.header", "X-Attempt", "request header with the attempt number")
	fs.StringVar(&o.idempotency, "idempotency.header", "Idempotency-Key", "request header with the idempotency key")
	o.log = cmdkit.AddLog(f, "")
	fs.VisitAll(func(fl *flag.Flag) { f.Env(fl.Name, envKeys(fl.Name)...) })
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: tap --upstream URL [flags]

A reverse proxy that publishes the agent's error replies to errtrail. A flag
not given on the command line reads ERRTRAIL_TAP_<FLAG> (upper case, '.' and
'-' as '_'), then, for --kafka.* and --log.*, ingest's ERRTRAIL_<FLAG>.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, cmdkit.Shown{Err: err}
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (the tap takes flags only)", fs.Arg(0))
	}
	if err := f.Resolve(); err != nil {
		return nil, err
	}
	if *upstream == "" {
		return nil, errors.New("--upstream is required")
	}
	u, err := url.Parse(*upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--upstream %q: want an http(s) base URL without query or fragment", *upstream)
	}
	o.upstream = u
	if err := kafka.Check(); err != nil {
		return nil, err
	}
	o.brokers = kafka.List
	if o.topic == "" {
		return nil, errors.New("--kafka.topic is empty")
	}
	for name, d := range map[string]time.Duration{"--http.read-header-timeout": o.headerTimeout,
		"--http.body-read-timeout": o.bodyReadTimeout, "--http.idle-timeout": o.idleTimeout} {
		if d <= 0 {
			return nil, fmt.Errorf("%s %v: want a duration above 0", name, d)
		}
	}
	for name, h := range map[string]string{"--caller.header": o.callerHeader, "--request-id.header": o.requestID,
		"--attempt.header": o.attempt, "--idempotency.header": o.idempotency} {
		if h != "" && isHopByHop(h) {
			return nil, fmt.Errorf("%s %q: a hop-by-hop header never reaches the agent, so it is never recorded", name, h)
		}
	}
	if o.source.Version != "" && !versionRE.MatchString(o.source.Version) {
		return nil, fmt.Errorf("--source.version %q: want a version such as 1.4.2 or v2.0.0-rc.1 (letters, digits and . _ + -, at most 64)", o.source.Version)
	}
	switch o.source.Kind {
	case emit.KindAgent, emit.KindGateway:
	default:
		return nil, fmt.Errorf("--source.kind %q: want agent or gateway", o.source.Kind)
	}
	if err := o.log.Check(); err != nil {
		return nil, err
	}
	return o, nil
}
