// Command ingest consumes error events from Kafka and writes them to
// ClickHouse (see docs/ingest.md).
//
//	ingest [run] [flags]        consume and insert until SIGTERM/SIGINT
//	ingest migrate [--print]    apply the schema migrations, or print the DDL
//	ingest decode FILE...       decode files offline and print the records
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/internal/chdial"
	"github.com/errtrail/errtrail/internal/cliflags"
	"github.com/errtrail/errtrail/internal/decodecli"
	"github.com/errtrail/errtrail/internal/redactkey"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/schema"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run":
		return runIngest(args, stderr)
	case "migrate":
		return runMigrate(args, stdout, stderr)
	case "decode":
		return decodecli.Run(args, stdin, stdout, stderr)
	case "hash":
		return decodecli.RunHash(args, stdout, stderr)
	case "help":
		fmt.Fprintln(stdout, "usage: ingest [run|migrate|decode|hash] [flags]; ingest <cmd> --help lists the flags")
		return 0
	default:
		fmt.Fprintf(stderr, "ingest: unknown command %q (run, migrate, decode, hash)\n", cmd)
		return 2
	}
}

// defaultSessionTimeout is the smallest session timeout brokers accept by
// default (group.min.session.timeout.ms): a replacement for a crashed
// member consumes within about that, plus a second to join and insert.
const defaultSessionTimeout = 6 * time.Second

// heartbeatInterval is a sixth of the session timeout (1s at the default):
// Kafka asks for at most a third, and a sixth survives five lost heartbeats.
func heartbeatInterval(session time.Duration) time.Duration {
	return max(session/6, 100*time.Millisecond)
}

// options holds every flag of run and migrate.
type options struct {
	brokers, topic, group        *string
	kafkaTLS                     cliflags.TLS
	saslMech, saslUser, saslPass *string
	sessionTimeout               *time.Duration
	chAddr, chDB, chUser, chPass *string
	chCluster                    *string
	chTLS                        cliflags.TLS
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
	logLevel, logFormat          *string
	pprof                        *bool
	print                        *bool
	redactKey                    *string
	resolve                      func() error // fills secrets from the environment after Parse
}

func newFlags(name string, stderr io.Writer) (*flag.FlagSet, *options) {
	fs := flag.NewFlagSet("ingest "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	e := cliflags.New(fs)
	o := &options{
		brokers:        e.String("kafka.brokers", "ERRTRAIL_KAFKA_BROKERS", "127.0.0.1:19092", "Kafka bootstrap brokers, comma-separated"),
		topic:          e.String("kafka.topic", "ERRTRAIL_KAFKA_TOPIC", "errtrail.replies", "topic to consume; a comma-separated list consumes several in one group"),
		group:          e.String("kafka.group", "ERRTRAIL_KAFKA_GROUP", "errtrail-ingest", "consumer group id"),
		kafkaTLS:       e.TLS("kafka", "ERRTRAIL_KAFKA", "Kafka"),
		sessionTimeout: e.Duration("kafka.session-timeout", "ERRTRAIL_KAFKA_SESSION_TIMEOUT", defaultSessionTimeout, "consumer group session timeout: how long a crashed member keeps its partitions before a replacement takes over; heartbeats go every sixth of it. Longer rides out longer stalls (a paused VM, a network blip) without a rebalance, shorter takes over sooner; the broker rejects values below its group.min.session.timeout.ms (6s by default)"),
		saslMech:       e.String("kafka.sasl.mechanism", "ERRTRAIL_KAFKA_SASL_MECHANISM", "", "SASL mechanism: plain, scram-sha-256 or scram-sha-512 (empty: no SASL)"),
		saslUser:       e.String("kafka.sasl.username", "ERRTRAIL_KAFKA_SASL_USERNAME", "", "SASL user name"),
		saslPass:       e.Secret("kafka.sasl.password", "ERRTRAIL_KAFKA_SASL_PASSWORD", "SASL password (never logged; prefer the env variable)"),

		chAddr:    e.String("clickhouse.addr", "ERRTRAIL_CLICKHOUSE_ADDR", "127.0.0.1:19000", "ClickHouse native-protocol addresses host:port, comma-separated"),
		chDB:      e.String("clickhouse.database", "ERRTRAIL_CLICKHOUSE_DATABASE", schema.DefaultDatabase, "database holding errtrail's tables (created by migrate)"),
		chUser:    e.String("clickhouse.user", "ERRTRAIL_CLICKHOUSE_USER", "default", "ClickHouse user"),
		chPass:    e.Secret("clickhouse.password", "ERRTRAIL_CLICKHOUSE_PASSWORD", "ClickHouse password (never logged; prefer the env variable)"),
		chCluster: e.String("clickhouse.cluster", "ERRTRAIL_CLICKHOUSE_CLUSTER", "", "render ON CLUSTER / Replicated* DDL for this cluster (docs/schema.md)"),
		chTLS:     e.TLS("clickhouse", "ERRTRAIL_CLICKHOUSE", "ClickHouse"),

		rows:           e.Int("batch.rows", "ERRTRAIL_BATCH_ROWS", 50000, "cut a batch at this many messages"),
		bytes:          e.Int("batch.bytes", "ERRTRAIL_BATCH_BYTES", 64<<20, "cut a batch at this many message bytes (with ~1 KiB events, --batch.rows cuts first)"),
		wait:           e.Duration("batch.wait", "ERRTRAIL_BATCH_WAIT", time.Second, "cut a batch when its oldest message waited this long"),
		insertTimeout:  e.Duration("insert.timeout", "ERRTRAIL_INSERT_TIMEOUT", time.Minute, "time allowed for one insert attempt, and for each write to ClickHouse"),
		blockRows:      e.Int("insert.block-rows", "ERRTRAIL_INSERT_BLOCK_ROWS", 1024, "rows per block of an insert: the driver grows its buffers to the first block and reuses them (one insert is still one part)"),
		backoffMax:     e.Duration("insert.backoff-max", "ERRTRAIL_INSERT_BACKOFF_MAX", 30*time.Second, "longest wait between insert retries (jittered, exponential from 100ms)"),
		workers:        e.Int("decode.workers", "ERRTRAIL_DECODE_WORKERS", 0, "decode goroutines (0: GOMAXPROCS)"),
		dedup:          e.Int("dedup.window", "ERRTRAIL_DEDUP_WINDOW", 1<<18, "producer event ids remembered to drop re-sends, per generation (two generations; <0 disables)"),
		gcPercent:      e.Int("gc.percent", "ERRTRAIL_GC_PERCENT", 400, "Go GC target: heap growth in percent between collections (GOGC, when set, wins); higher spends less CPU on GC and more memory"),
		memLimitMiB:    e.Int("memory.limit-mib", "ERRTRAIL_MEMORY_LIMIT_MIB", 1024, "soft memory limit in MiB: the GC works harder near it (GOMEMLIMIT, when set, wins; 0: none)"),
		redactKey:      e.String("redact.key-file", "ERRTRAIL_REDACT_KEY_FILE", "", "file holding the deployment key of the hashes that replace identifier values that may not be stored (docs/record.md); every ingester and lookup of a deployment must share it, and it must never reach ClickHouse. Empty: "+redactkey.DefaultPath()+", created on first start"),
		maxBytes:       e.Int("parse.max-bytes", "ERRTRAIL_PARSE_MAX_BYTES", 1<<20, "largest message decoded; larger ones are dead-lettered as too_large"),
		retentionDays:  e.Int("retention.days", "ERRTRAIL_RETENTION_DAYS", schema.DefaultRetentionDays, "days of errors and dead letters kept (TTL, or dropped partitions on servers without TTL)"),
		retentionEvery: e.Duration("retention.interval", "ERRTRAIL_RETENTION_INTERVAL", time.Hour, "how often old partitions are dropped on servers without TTL"),
		listen:         e.String("http.listen-address", "ERRTRAIL_INGEST_LISTEN_ADDRESS", "127.0.0.1:19100", "address of /metrics, /healthz and /readyz"),
		shutdown:       e.Duration("shutdown.timeout", "ERRTRAIL_SHUTDOWN_TIMEOUT", 30*time.Second, "after SIGTERM: time to flush, insert and commit before giving up (uncommitted messages are replayed)"),
		pprof:          e.Bool("http.pprof", "ERRTRAIL_INGEST_PPROF", false, "serve Go profiles under /debug/pprof/ on the HTTP address"),
		logLevel:       e.String("log.level", "ERRTRAIL_LOG_LEVEL", "info", "debug, info, warn or error"),
		logFormat:      e.String("log.format", "ERRTRAIL_LOG_FORMAT", "text", "text or json"),
	}
	if name == "migrate" {
		o.print = fs.Bool("print", false, "print the DDL for the connected server instead of applying it")
	}
	o.resolve = e.Resolve
	return fs, o
}

func newLogger(o *options, w io.Writer) *slog.Logger {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*o.logLevel)); err != nil {
		lvl = slog.LevelInfo
	}
	ho := &slog.HandlerOptions{Level: lvl}
	if *o.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, ho))
	}
	return slog.New(slog.NewTextHandler(w, ho))
}

// validSettings reports settings that can never work (a database name
// that is not a plain identifier, a retention under a day), so that they
// stop start-up instead of the retry loop that waits for a server.
func validSettings(o *options, log *slog.Logger) bool {
	if err := o.schemaOptions().Validate(); err != nil {
		log.Error("invalid settings", "error", err)
		return false
	}
	return true
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

func (o *options) schemaOptions() schema.Options {
	return schema.Options{Database: *o.chDB, Cluster: *o.chCluster, RetentionDays: *o.retentionDays}
}

// connectClickHouse opens a native-protocol pool with LZ4 compression (the
// only combination that works with every supported server, 18.16 included).
func connectClickHouse(ctx context.Context, o *options) (driver.Conn, error) {
	tc, err := o.chTLS.Config()
	if err != nil {
		return nil, fmt.Errorf("clickhouse TLS: %w", err)
	}
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:     cliflags.SplitList(*o.chAddr),
		Protocol: clickhouse.Native,
		Auth:     clickhouse.Auth{Database: "default", Username: *o.chUser, Password: *o.chPass},
		// chdial does TLS and bounds every write: the driver sends the
		// blocks of an INSERT with no deadline of its own.
		DialContext:  (&chdial.Dialer{Timeout: 10 * time.Second, WriteTimeout: *o.insertTimeout, TLS: tc}).DialContext,
		Compression:  &clickhouse.Compression{Method: clickhouse.CompressionLZ4},
		DialTimeout:  10 * time.Second,
		ReadTimeout:  *o.insertTimeout,
		MaxOpenConns: 4,
	})
	if err != nil {
		return nil, err
	}
	return conn, nil
}

func kafkaDialer(o *options) (*kafka.Dialer, error) {
	tc, err := o.kafkaTLS.Config()
	if err != nil {
		return nil, fmt.Errorf("kafka TLS: %w", err)
	}
	d := &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: tc}
	var mech sasl.Mechanism
	switch strings.ToLower(*o.saslMech) {
	case "":
	case "plain":
		mech = plain.Mechanism{Username: *o.saslUser, Password: *o.saslPass}
	case "scram-sha-256":
		mech, err = scram.Mechanism(scram.SHA256, *o.saslUser, *o.saslPass)
	case "scram-sha-512":
		mech, err = scram.Mechanism(scram.SHA512, *o.saslUser, *o.saslPass)
	default:
		return nil, fmt.Errorf("unknown --kafka.sasl.mechanism %q (plain, scram-sha-256, scram-sha-512)", *o.saslMech)
	}
	if err != nil {
		return nil, err
	}
	d.SASLMechanism = mech
	return d, nil
}

// phase logs the start and the duration of one step of main's checklist.
func phase(log *slog.Logger, name string) func() {
	start := time.Now()
	log.Info(name + "...")
	return func() { log.Info(name+" done", "took", time.Since(start).Round(time.Millisecond)) }
}

func runMigrate(args []string, stdout, stderr io.Writer) int {
	fs, o := newFlags("migrate", stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := o.resolve(); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	log := newLogger(o, stderr)
	if !validSettings(o, log) {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	conn, err := connectClickHouse(ctx, o)
	if err != nil {
		log.Error("connect to ClickHouse", "error", err)
		return 1
	}
	defer conn.Close()
	if *o.print {
		v, err := schema.DetectVersion(ctx, conn)
		if err != nil {
			log.Error("server version", "error", err)
			return 1
		}
		for _, m := range schema.Render(v, o.schemaOptions()) {
			fmt.Fprintf(stdout, "-- migration %03d %s (ClickHouse %s)\n", m.Version, m.Name, v)
			for _, s := range m.Statements {
				fmt.Fprintf(stdout, "%s;\n\n", s)
			}
		}
		return 0
	}
	res, err := schema.Migrate(ctx, conn, o.schemaOptions())
	if err != nil {
		log.Error("migrate", "error", err)
		return 1
	}
	log.Info("migrated", "server", res.Server.String(), "applied", res.Applied, "current", res.Current, "drifted", res.Drifted)
	return 0
}

func runIngest(args []string, stderr io.Writer) int {
	fs, o := newFlags("run", stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := o.resolve(); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	log := newLogger(o, stderr)
	if !validSettings(o, log) {
		return 2
	}
	if len(cliflags.SplitList(*o.topic)) == 0 {
		log.Error("invalid settings", "error", "--kafka.topic names no topic")
		return 2
	}
	tuneGC(o)
	key, keyFile, created, err := redactkey.Load(*o.redactKey, true)
	if err != nil {
		log.Error("invalid settings", "error", err)
		return 2
	}
	if created {
		log.Warn("created a new redaction key; every ingester and lookup of this deployment must use the same file", "file", keyFile)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log.Info("errtrail ingest starting", "brokers", *o.brokers, "topic", *o.topic, "group", *o.group,
		"clickhouse", *o.chAddr, "database", *o.chDB, "user", *o.chUser)

	// 1. Check the column contract with the schema package.
	names := make([]string, len(schema.LandingColumns))
	for i, c := range schema.LandingColumns {
		names[i] = c.Name
	}
	if err := ingest.CheckColumns(names); err != nil {
		log.Error("landing columns do not match the schema", "error", err)
		return 1
	}

	// 2. ClickHouse: connect and migrate (waits while the server is down).
	done := phase(log, "connecting to ClickHouse and migrating")
	conn, err := connectClickHouse(ctx, o)
	if err != nil {
		log.Error("connect to ClickHouse", "error", err)
		return 1
	}
	defer conn.Close()
	bo := ingest.Backoff{Max: 10 * time.Second}
	var server schema.ServerVersion
	for attempt := 0; ; attempt++ {
		var res schema.Result
		res, err = schema.Migrate(ctx, conn, o.schemaOptions())
		server = res.Server
		if err == nil {
			break
		}
		class := ingest.Classify(err)
		if ctx.Err() != nil || class.Permanent() || attempt > 1000 {
			log.Error("migrate", "class", class, "error", err)
			return 1
		}
		d := bo.Delay(attempt, nil)
		log.Warn("migrate failed; retrying", "class", class, "backoff", d, "error", err)
		select {
		case <-ctx.Done():
			return 1
		case <-time.After(d):
		}
	}
	done()
	log.Info("schema ready", "server", server.String(), "insert_dedup", schema.FeaturesOf(server).InsertDedup)

	// 3. Metrics and the HTTP server.
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := ingest.NewMetrics(reg)
	var pipe *ingest.Pipeline
	ready := func() error {
		if pipe == nil {
			return errors.New("starting")
		}
		if err := pipe.Failure(); err != nil {
			return err
		}
		if !pipe.Ready() {
			return errors.New("not consuming")
		}
		return nil
	}
	done = phase(log, "starting HTTP server on "+*o.listen)
	ln, err := net.Listen("tcp", *o.listen)
	if err != nil {
		log.Error("listen", "address", *o.listen, "error", err)
		return 1
	}
	handler := ingest.Handler(reg, ready)
	if *o.pprof {
		mux := http.NewServeMux()
		mux.Handle("/", handler)
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		handler = mux
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server", "error", err)
		}
	}()
	done()

	// 4. Kafka consumer group.
	done = phase(log, "joining consumer group")
	dialer, err := kafkaDialer(o)
	if err != nil {
		log.Error("kafka", "error", err)
		return 1
	}
	kafkaLog := ingest.NewLogLimiter(log, 5, 10*time.Second) // a broker outage repeats errors every second
	topics := cliflags.SplitList(*o.topic)
	rc := kafka.ReaderConfig{
		Brokers:        cliflags.SplitList(*o.brokers),
		GroupID:        *o.group,
		Dialer:         dialer,
		MinBytes:       1,
		MaxBytes:       8 << 20,
		MaxWait:        250 * time.Millisecond,
		QueueCapacity:  256, // ≤ 256 MiB queued even of 1 MiB messages; 1,000 measured no cheaper (docs/performance.md)
		StartOffset:    kafka.FirstOffset,
		CommitInterval: 0, // synchronous: ingest commits once per batch, after the insert
		ErrorLogger:    kafka.LoggerFunc(func(f string, a ...any) { kafkaLog.Log(slog.LevelWarn, "kafka: "+fmt.Sprintf(f, a...)) }),

		// A crashed member keeps its partitions until its session expires, so
		// the session timeout is how long a replacement waits (docs/ingest.md).
		SessionTimeout:    *o.sessionTimeout,
		HeartbeatInterval: heartbeatInterval(*o.sessionTimeout),
		// How long a rebalance waits for live members to rejoin (a crashed one
		// is dropped when its session expires). kafka-go's deadline for a
		// JoinGroup is this plus 5s, so every member needs the same value:
		// kafka-go's default.
		RebalanceTimeout: 30 * time.Second,
		// After a failed join (coordinator moved, broker restarting): kafka-go
		// waits 5s by default, which a restarted broker's consumers pay.
		JoinGroupBackoff: time.Second,
	}
	if len(topics) == 1 {
		rc.Topic = topics[0]
	} else {
		rc.GroupTopics = topics // kafka-go takes one or the other
	}
	reader := kafka.NewReader(rc)
	done()

	// 5. Run until a signal.
	sopt := o.schemaOptions()
	days := *o.retentionDays
	pipe, err = ingest.New(ingest.Config{
		Topics:  topics,
		Table:   *o.chDB + "." + schema.TableLanding,
		Limits:  ingest.Limits{Rows: *o.rows, Bytes: *o.bytes, Wait: *o.wait},
		Workers: *o.workers, DedupWindow: *o.dedup,
		Decoder:         parse.Options{MaxBytes: *o.maxBytes, HashKey: key},
		Backoff:         ingest.Backoff{Max: *o.backoffMax},
		InsertTimeout:   *o.insertTimeout,
		InsertBlockRows: *o.blockRows,
		ShutdownTimeout: *o.shutdown,
		InsertSettings: func(token string) map[string]any {
			return schema.InsertSettings(server, token)
		},
		Progress: func(ctx context.Context, conn driver.Conn, topic string) (map[int32]int64, error) {
			return schema.Progress(ctx, conn, sopt, topic)
		},
		Retain: func(ctx context.Context, conn driver.Conn) error {
			dropped, err := schema.Retain(ctx, conn, sopt, days)
			for _, d := range dropped {
				log.Info("retention dropped partition", "table", d.Table, "partition", d.Partition)
			}
			return err
		},
		RetainEvery: *o.retentionEvery,
		Logger:      log,
		Metrics:     metrics,
	}, reader, conn)
	if err != nil {
		log.Error("ingest", "error", err)
		return 1
	}
	log.Info("consuming; send SIGTERM or SIGINT to stop")
	runErr := pipe.Run(ctx)
	log.Info("pipeline stopped", "error", runErr)

	// 6. Stop in reverse order, each step bounded.
	done = phase(log, "closing Kafka reader")
	closed := make(chan struct{})
	go func() { reader.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		log.Warn("kafka reader did not close in 10s; leaving it")
	}
	done()
	done = phase(log, "stopping HTTP server")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = srv.Shutdown(sctx)
	cancel()
	done()
	if runErr != nil {
		log.Error("ingest ended with an error", "error", runErr)
		return 1
	}
	log.Info("ingest stopped cleanly")
	return 0
}
