package ingest

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// QueryProgress reads ingest_progress (highest offset per partition held by
// ClickHouse, written by a materialized view of landing). It is the
// ProgressFunc used until the schema package provides schema.Progress.
func QueryProgress(ctx context.Context, conn driver.Conn, topic string) (map[int32]int64, error) {
	rows, err := conn.Query(ctx,
		"SELECT kafka_partition, max(kafka_offset) FROM ingest_progress WHERE kafka_topic = ? GROUP BY kafka_partition", topic)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int32]int64{}
	for rows.Next() {
		var p int32
		var off int64
		if err := rows.Scan(&p, &off); err != nil {
			return nil, err
		}
		out[p] = off
	}
	return out, rows.Err()
}
