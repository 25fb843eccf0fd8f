package main

import (
	"context"
	"log/slog"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/otlpin"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/schema"
)

// pipelineConfig turns the flags into the pipeline's settings, with the
// schema package's answers for the migrated server: insert settings, the
// stored progress of each partition, and retention.
func pipelineConfig(o *options, topics []string, otlp map[string]otlpin.Format, key []byte, server schema.ServerVersion, shards *ingest.Shards, metrics *ingest.Metrics, log *slog.Logger) ingest.Config {
	sopt := o.schemaOptions()
	days := *o.retentionDays
	return ingest.Config{
		Topics: topics,
		OTLP:   otlp, OTLPCaller: *o.otlpCaller,
		Table:   *o.chDB + "." + schema.TableLanding,
		Limits:  ingest.Limits{Rows: *o.rows, Bytes: *o.bytes, Wait: *o.wait},
		Workers: *o.workers, DedupWindow: *o.dedup,
		Decoder:         parse.Options{MaxBytes: *o.maxBytes, HashKey: key},
		Backoff:         ingest.Backoff{Max: *o.backoffMax},
		InsertTimeout:   *o.insertTimeout,
		InsertBlockRows: *o.blockRows,
		ShutdownTimeout: *o.shutdown,
		// On a cluster each shard gets its rows directly: one shard down
		// does not stop the others' partitions.
		Shards: shards,
		InsertSettings: func(token string) map[string]any {
			return schema.InsertSettingsFor(server, sopt, token)
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
	}
}
