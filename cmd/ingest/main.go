// Command ingest consumes error events from Kafka and writes them to
// ClickHouse (see docs/ingest.md).
//
//	ingest [run] [flags]        consume and insert until SIGTERM/SIGINT (migrates first)
//	ingest migrate [--print]    apply the schema migrations, or print the DDL
//	ingest decode FILE...       decode files offline and print the records
//	ingest hash VALUE...        print the hash that replaces a value
//
// This file holds the subcommands' checklists; flags.go reads the settings
// (each subcommand's own), usage.go says what each command does,
// connect.go opens ClickHouse and the Kafka consumer group, migrate.go owns
// the schema steps, serve.go the HTTP server and /readyz, consume.go the
// pipeline's settings.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/internal/decodecli"
	"github.com/errtrail/errtrail/schema"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the exit status: 0 when it
// succeeded, 1 when it failed, 2 for a bad command line or settings.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run":
		return runIngest(context.Background(), args, stderr)
	case "migrate":
		return runMigrate(context.Background(), args, stdout, stderr)
	case "decode":
		return decodecli.Run(args, stdin, stdout, stderr)
	case "hash":
		return decodecli.RunHash(args, stdout, stderr)
	case "help":
		printCommands(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "ingest: unknown command %q\n\n", cmd)
		printCommands(stderr)
		return 2
	}
}

// phase logs the start and the duration of one step of a checklist.
func phase(log *slog.Logger, name string) func() {
	start := time.Now()
	log.Info(name + "...")
	return func() { log.Info(name+" done", "took", time.Since(start).Round(time.Millisecond)) }
}

// runIngest is `ingest run`: it consumes until SIGINT or SIGTERM (or until
// ctx ends, which tests use) and then stops in reverse order.
func runIngest(ctx context.Context, args []string, stderr io.Writer) int {
	o, log, exit := parseFlags("run", args, stderr)
	if exit != proceed {
		return exit
	}
	topics, otlpFormats, ok := o.topics(log)
	if !ok {
		return 2
	}
	tuneGC(o)
	key, ok := o.loadRedactKey(log)
	if !ok {
		return 2
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log.Info("errtrail ingest starting", "brokers", *o.brokers, "topic", *o.topic, "otlp_topics", *o.otlpTopics, "group", *o.group,
		"clickhouse", *o.chAddr, "database", *o.chDB, "user", *o.chUser)

	// 1. ClickHouse: connect and migrate (waits while the server is down).
	done := phase(log, "connecting to ClickHouse and migrating")
	conn, ok := openClickHouse(ctx, o, log)
	if !ok {
		return 1
	}
	defer conn.Close()
	server, ok := migrateUntilReady(ctx, conn, migrator(o), o.schemaOptions(), log)
	if !ok {
		return 1
	}
	done()
	log.Info("schema ready", "server", server.String(), "insert_dedup", schema.FeaturesOf(server).InsertDedup)
	var shards *ingest.Shards
	if *o.chCluster != "" && *o.chShardWrites {
		sh, closeShards, ok := connectShards(ctx, o, conn, log)
		if !ok {
			return 1
		}
		defer closeShards()
		shards = sh
	}

	// 2. Metrics and the HTTP server; /readyz says "starting" until step 4.
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := ingest.NewMetrics(reg)
	var ready readiness
	done = phase(log, "starting HTTP server on "+*o.listen)
	srv, ok := serveHTTP(o, reg, &ready, log)
	if !ok {
		return 1
	}
	done()

	// 3. Kafka consumer group.
	done = phase(log, "joining consumer group")
	reader, ok := joinGroup(o, topics, log)
	if !ok {
		return 1
	}
	done()

	// 4. Run until a signal.
	pipe, err := ingest.New(pipelineConfig(o, topics, otlpFormats, key, server, shards, metrics, log), reader, conn)
	if err != nil {
		log.Error("ingest", "err", err)
		return 1
	}
	ready.set(pipe)
	log.Info("consuming; send SIGTERM or SIGINT to stop")
	runErr := pipe.Run(ctx)
	log.Info("pipeline stopped", "err", runErr)

	// 5. Stop in reverse order, each step bounded.
	done = phase(log, "closing Kafka reader")
	closeReader(reader, log)
	done()
	done = phase(log, "stopping HTTP server")
	stopHTTP(srv)
	done()
	if runErr != nil {
		log.Error("ingest ended with an error", "err", runErr)
		return 1
	}
	log.Info("ingest stopped cleanly")
	return 0
}
