package ingest

import (
	_ "github.com/ClickHouse/clickhouse-go/v2"
	_ "github.com/cespare/xxhash/v2"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/segmentio/kafka-go"
	_ "github.com/segmentio/kafka-go/sasl/plain"
	_ "github.com/segmentio/kafka-go/sasl/scram"
)
