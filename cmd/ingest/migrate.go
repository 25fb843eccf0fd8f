package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/schema"
)

// runMigrate is `ingest migrate`: one attempt at the migrations (or, with
// --print, the DDL for the connected server), no retries.
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, log, exit := parseFlags("migrate", args, stderr)
	if exit != proceed {
		return exit
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	conn, ok := openClickHouse(ctx, o, log)
	if !ok {
		return 1
	}
	defer conn.Close()
	if *o.print {
		return printDDL(ctx, conn, o.schemaOptions(), stdout, log)
	}
	res, err := migrator(o).Migrate(ctx, conn, o.schemaOptions())
	if err != nil {
		log.Error("migrate", "err", err)
		return 1
	}
	log.Info("migrated", "server", res.Server.String(), "applied", res.Applied, "current", res.Current, "drifted", res.Drifted, "repaired", res.Repaired)
	return 0
}

// printDDL writes every migration as the connected server would run it and
// returns the exit status.
func printDDL(ctx context.Context, conn driver.Conn, sopt schema.Options, stdout io.Writer, log *slog.Logger) int {
	v, err := schema.DetectVersion(ctx, conn)
	if err != nil {
		log.Error("server version", "err", err)
		return 1
	}
	for _, m := range schema.Render(v, sopt) {
		fmt.Fprintf(stdout, "-- migration %03d %s (ClickHouse %s)\n", m.Version, m.Name, v)
		for _, s := range m.Statements {
			fmt.Fprintf(stdout, "%s;\n\n", s)
		}
	}
	return 0
}

// migrator is schema's Migrator with a way to reach each shard of
// --clickhouse.cluster, with the main connection's options: on servers
// before 20.1 it runs an ALTER of a replicated table on one replica of each
// shard instead of ON CLUSTER (schema/alter.go).
func migrator(o *options) schema.Migrator {
	return schema.Migrator{Dial: func(ctx context.Context, replicas []string) (driver.Conn, error) {
		return connectClickHouseTo(ctx, o, replicas)
	}}
}

// migrateUntilReady applies the migrations for run, retrying with backoff
// while the server is down or failing transiently. It gives up (logged, and
// the caller exits 1) on a permanent error, after a thousand attempts, or
// when ctx ends.
func migrateUntilReady(ctx context.Context, conn driver.Conn, mg schema.Migrator, sopt schema.Options, log *slog.Logger) (schema.ServerVersion, bool) {
	bo := ingest.Backoff{Max: 10 * time.Second}
	for attempt := 0; ; attempt++ {
		res, err := mg.Migrate(ctx, conn, sopt)
		if err == nil {
			return res.Server, true
		}
		class := ingest.Classify(err)
		if ctx.Err() != nil || class.Permanent() || attempt > 1000 {
			log.Error("migrate", "class", class, "err", err)
			return schema.ServerVersion{}, false
		}
		d := bo.Delay(attempt, nil)
		log.Warn("migrate failed; retrying", "class", class, "backoff", d, "err", err)
		select {
		case <-ctx.Done():
			return schema.ServerVersion{}, false
		case <-time.After(d):
		}
	}
}
