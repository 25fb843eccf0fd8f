package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/errtrail/errtrail/internal/cliflags"
	"github.com/errtrail/errtrail/internal/cmdkit"
	"github.com/errtrail/errtrail/internal/redactkey"
	"github.com/errtrail/errtrail/otlpin"
	"github.com/errtrail/errtrail/schema"
)

// options holds every flag of run and migrate; a flag the subcommand does
// not have (newFlags) is nil.
type options struct {
	brokers, topic, group        *string
	otlpTopics, otlpCaller       *string
	kafkaTLS                     cliflags.TLS
	saslMech, saslUser, saslPass *string
	sessionTimeout               *time.Duration
	ch                           *cmdkit.ClickHouse // its password is never logged
	chAddr, chDB, chUser         *string            // ch's flags
	chCluster                    *string
	chShardWrites                *bool
	rows, bytes                  *int
	wait                         *time.Duration
	insertTimeout, backoffMax    *time.Duration
	blockRows                    *int
	workers, dedup, maxBytes     *int
	gcPercent, memLimitMiB       *int
	retentionDays                *int
	retentionEvery               *time.Duration
	listen                       *string
	shutdown                     *time.Duration
	log                          *cmdkit.Log
	pprof                        *bool
	print                        *bool
	redactKey                    *string
	resolve                      func() error // fills secrets from the environment after Parse
}

// newFlags registers the flags of subcommand name (run or migrate) and no
// others: migrate has the ClickHouse connection, the schema's settings
// (database, cluster, retention days) and the log's; run has those and
// Kafka's, the pipeline's and the server's. A flag of the other
// subcommand is an error ("flag provided but not defined"), and --help
// lists only what the subcommand reads (usage.go).
func newFlags(name string, stderr io.Writer) (*flag.FlagSet, *options) {
	fs := flag.NewFlagSet("ingest "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(fs, name) }
	e := cliflags.New(fs)
	o := &options{}
	run := name == "run"

	// Both: where the schema lives and how to reach it, and the log.
	o.ch = cmdkit.AddClickHouse(e, "ERRTRAIL_", cmdkit.ClickHouseHelp{Database: "database holding errtrail's tables (created by migrate)"})
	o.chAddr, o.chDB, o.chUser = o.ch.Addr, o.ch.Database, o.ch.User
	o.chCluster = e.String("clickhouse.cluster", "ERRTRAIL_CLICKHOUSE_CLUSTER", "", "render ON CLUSTER / Replicated* DDL for this cluster (docs/schema.md)")
	o.insertTimeout = e.Duration("insert.timeout", "ERRTRAIL_INSERT_TIMEOUT", time.Minute, "time allowed for one insert attempt, and for each write to ClickHouse (migrate: each DDL statement)")
	o.retentionDays = e.Int("retention.days", "ERRTRAIL_RETENTION_DAYS", schema.DefaultRetentionDays, "days of errors and dead letters kept (TTL, or dropped partitions on servers without TTL)")
	o.log = cmdkit.AddLog(e, "ERRTRAIL_")
	if !run {
		o.print = fs.Bool("print", false, "print the DDL for the connected server instead of applying it")
		o.resolve = e.Resolve
		return fs, o
	}

	o.brokers = cmdkit.AddKafka(e, "ERRTRAIL_").Brokers
	o.topic = e.String("kafka.topic", "ERRTRAIL_KAFKA_TOPIC", "errtrail.replies", "topic to consume; a comma-separated list consumes several in one group")
	o.otlpTopics = e.String("kafka.otlp-topics", "ERRTRAIL_KAFKA_OTLP_TOPICS", "", "OpenTelemetry topics as the Collector's Kafka exporter writes them, consumed in the same group: topic:encoding[/signal], comma-separated, e.g. otlp_spans:otlp_proto,otlp_logs:otlp_json (encoding otlp_proto or otlp_json; signal traces or logs, default from the topic's name; docs/otel.md)")
	o.otlpCaller = e.String("otlp.caller-attribute", "ERRTRAIL_OTLP_CALLER_ATTRIBUTE", "enduser.id", "the span or log attribute that names the caller in OTLP data (client.address is the other usual choice)")
	o.group = e.String("kafka.group", "ERRTRAIL_KAFKA_GROUP", "errtrail-ingest", "consumer group id")
	o.kafkaTLS = e.TLS("kafka", "ERRTRAIL_KAFKA", "Kafka")
	o.sessionTimeout = e.Duration("kafka.session-timeout", "ERRTRAIL_KAFKA_SESSION_TIMEOUT", defaultSessionTimeout, "consumer group session timeout: how long a crashed member keeps its partitions before a replacement takes over; heartbeats go every sixth of it. Longer rides out longer stalls (a paused VM, a network blip) without a rebalance, shorter takes over sooner; the broker rejects values below its group.min.session.timeout.ms (6s by default)")
	o.saslMech = e.String("kafka.sasl.mechanism", "ERRTRAIL_KAFKA_SASL_MECHANISM", "", "SASL mechanism: plain, scram-sha-256 or scram-sha-512 (empty: no SASL)")
	o.saslUser = e.String("kafka.sasl.username", "ERRTRAIL_KAFKA_SASL_USERNAME", "", "SASL user name")
	o.saslPass = e.Secret("kafka.sasl.password", "ERRTRAIL_KAFKA_SASL_PASSWORD", "SASL password (never logged; prefer the env variable)")
	o.chShardWrites = e.Bool("clickhouse.shard-writes", "ERRTRAIL_CLICKHOUSE_SHARD_WRITES", true,
		"with --clickhouse.cluster: write each shard its rows directly, at the addresses system.clusters gives (one shard down then stops only its own partitions); false: every insert goes through the Distributed landing table")
	o.rows = e.Int("batch.rows", "ERRTRAIL_BATCH_ROWS", 50000, "cut a batch at this many messages")
	o.bytes = e.Int("batch.bytes", "ERRTRAIL_BATCH_BYTES", 64<<20, "cut a batch at this many message bytes (with ~1 KiB events, --batch.rows cuts first)")
	o.wait = e.Duration("batch.wait", "ERRTRAIL_BATCH_WAIT", time.Second, "cut a batch when its oldest message waited this long")
	o.blockRows = e.Int("insert.block-rows", "ERRTRAIL_INSERT_BLOCK_ROWS", 1024, "rows per block of an insert: the driver grows its buffers to the first block and reuses them (one insert is still one part)")
	o.backoffMax = e.Duration("insert.backoff-max", "ERRTRAIL_INSERT_BACKOFF_MAX", 30*time.Second, "longest wait between insert retries (jittered, exponential from 100ms)")
	o.workers = e.Int("decode.workers", "ERRTRAIL_DECODE_WORKERS", 0, "decode goroutines (0: GOMAXPROCS)")
	o.dedup = e.Int("dedup.window", "ERRTRAIL_DEDUP_WINDOW", 1<<18, "producer event ids remembered to drop re-sends, per generation (two generations; <0 disables)")
	o.gcPercent = e.Int("gc.percent", "ERRTRAIL_GC_PERCENT", 400, "Go GC target: heap growth in percent between collections (GOGC, when set, wins); higher spends less CPU on GC and more memory")
	o.memLimitMiB = e.Int("memory.limit-mib", "ERRTRAIL_MEMORY_LIMIT_MIB", 1024, "soft memory limit in MiB: the GC works harder near it (GOMEMLIMIT, when set, wins; 0: none)")
	o.redactKey = e.String("redact.key-file", "ERRTRAIL_REDACT_KEY_FILE", "", "file holding the deployment key of the hashes that replace identifier values that may not be stored (docs/record.md); every ingester and lookup of a deployment must share it, and it must never reach ClickHouse. Empty: "+redactkey.DefaultPath()+", created on first start")
	o.maxBytes = e.Int("parse.max-bytes", "ERRTRAIL_PARSE_MAX_BYTES", 1<<20, "largest message decoded; larger ones are dead-lettered as too_large")
	o.retentionEvery = e.Duration("retention.interval", "ERRTRAIL_RETENTION_INTERVAL", time.Hour, "how often old partitions are dropped on servers without TTL")
	o.listen = e.String("http.listen-address", "ERRTRAIL_INGEST_LISTEN_ADDRESS", "127.0.0.1:19100", "address of /metrics, /healthz and /readyz")
	o.shutdown = e.Duration("shutdown.timeout", "ERRTRAIL_SHUTDOWN_TIMEOUT", 30*time.Second, "after SIGTERM: time to flush, insert and commit before giving up (uncommitted messages are replayed)")
	o.pprof = e.Bool("http.pprof", "ERRTRAIL_INGEST_PPROF", false, "serve Go profiles under /debug/pprof/ on the HTTP address")
	o.resolve = e.Resolve
	return fs, o
}

// proceed is parseFlags' status when the subcommand goes on.
const proceed = -1

// parseFlags is the preamble of run and migrate: it parses args for the
// subcommand name, fills the secrets from the environment, builds the
// logger and rejects settings that can never work. It returns proceed, or
// the exit status after it has said why (on stderr or in the log): 0 for
// --help, 2 for a bad command line or settings.
func parseFlags(name string, args []string, stderr io.Writer) (*options, *slog.Logger, int) {
	fs, o := newFlags(name, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil, 0
		}
		return nil, nil, 2
	}
	if err := o.resolve(); err != nil {
		fmt.Fprintln(stderr, err)
		return nil, nil, 2
	}
	if err := o.log.Check(); err != nil {
		fmt.Fprintln(stderr, err)
		return nil, nil, 2
	}
	log := o.log.Logger(stderr)
	if !validSettings(o, log) {
		return nil, nil, 2
	}
	return o, log, proceed
}

// validSettings reports settings that can never work (a database name
// that is not a plain identifier, a retention under a day), so that they
// stop start-up instead of the retry loop that waits for a server.
func validSettings(o *options, log *slog.Logger) bool {
	if err := o.ch.Check(); err != nil {
		log.Error("invalid settings", "err", err)
		return false
	}
	if err := o.schemaOptions().Validate(); err != nil {
		log.Error("invalid settings", "err", err)
		return false
	}
	return true
}

func (o *options) schemaOptions() schema.Options {
	return schema.Options{Database: *o.chDB, Cluster: *o.chCluster, RetentionDays: *o.retentionDays}
}

// topics returns every topic to consume: the event topics of --kafka.topic
// and the OTLP topics of --kafka.otlp-topics, with the latters' formats; or
// logs why the lists cannot be used.
func (o *options) topics(log *slog.Logger) ([]string, map[string]otlpin.Format, bool) {
	topics := cliflags.SplitList(*o.topic)
	formats, err := otlpTopics(*o.otlpTopics)
	if err != nil {
		log.Error("invalid settings", "err", err)
		return nil, nil, false
	}
	for _, t := range topics {
		if _, dup := formats[t]; dup {
			log.Error("invalid settings", "err", "topic "+t+" is in both --kafka.topic and --kafka.otlp-topics")
			return nil, nil, false
		}
	}
	for _, t := range cliflags.SplitList(*o.otlpTopics) {
		name, _, _ := strings.Cut(t, ":")
		if !slices.Contains(topics, name) {
			topics = append(topics, name)
		}
	}
	if len(topics) == 0 {
		log.Error("invalid settings", "err", "--kafka.topic names no topic, and --kafka.otlp-topics none either")
		return nil, nil, false
	}
	return topics, formats, true
}

// otlpTopics parses --kafka.otlp-topics.
func otlpTopics(v string) (map[string]otlpin.Format, error) {
	out := map[string]otlpin.Format{}
	for _, t := range cliflags.SplitList(v) {
		name, format, ok := strings.Cut(t, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("--kafka.otlp-topics: %q: want topic:otlp_proto or topic:otlp_json", t)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--kafka.otlp-topics: topic %s given twice", name)
		}
		f, err := otlpin.ParseFormat(name, format)
		if err != nil {
			return nil, fmt.Errorf("--kafka.otlp-topics: %w", err)
		}
		out[name] = f
	}
	return out, nil
}

// loadRedactKey loads the deployment's redaction key named by --redact.key-file
// (creating it on first start, with a warning), or logs why it cannot.
func (o *options) loadRedactKey(log *slog.Logger) ([]byte, bool) {
	key, keyFile, created, err := redactkey.Load(*o.redactKey, true)
	if err != nil {
		log.Error("invalid settings", "err", err)
		return nil, false
	}
	if created {
		log.Warn("created a new redaction key; every ingester and lookup of this deployment must use the same file", "file", keyFile)
	}
	return key, true
}

// tuneGC applies --gc.percent and --memory.limit-mib unless the Go
// runtime's own GOGC and GOMEMLIMIT are set. A batch's rows are garbage
// once inserted, so the default GC target (100 %) collects several times
// per batch; 400 % took about a tenth off the CPU per event
// (docs/performance.md), and the soft limit keeps the larger heap bounded.
func tuneGC(o *options) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(*o.gcPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set && *o.memLimitMiB > 0 {
		debug.SetMemoryLimit(int64(*o.memLimitMiB) << 20)
	}
}
