package ingest

import (
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/parse"
)

// RowSource is where one message came from: what a landing row holds
// beyond its parse.Record.
type RowSource struct {
	Topic       string // kept, not copied: it must outlive the builder's rows
	Partition   int32
	Offset      int64
	KafkaTimeMS int64 // the message's Kafka timestamp: observed_at when the record has none
	IngestedAt  int64 // Unix seconds
}

// RowBuilder builds landing rows with the ingester's own code and column
// buffers, for programs outside this package that must insert exactly the
// rows ingest inserts: bench/drivers compares ClickHouse drivers on them,
// so the comparison follows every change to the row layout. The pipeline
// uses the buffers directly, without this wrapper.
//
// The rows' strings are copies held by the builder; the slices Columns
// returns borrow them and the builder's buffers, and stay valid until
// Reset. The zero value is ready to use; Reset keeps the capacity, so a
// reused builder allocates nothing per row in steady state.
type RowBuilder struct {
	c columns
}

// Append adds one row: derr is nil for a decoded message and the decode
// failure for a dead-letter row, raw the (already redacted) bytes a
// dead-letter row keeps.
func (b *RowBuilder) Append(src RowSource, rec *parse.Record, derr *parse.DecodeError, raw []byte) {
	m := rowMeta{topic: src.Topic, partition: src.Partition, offset: src.Offset,
		kafkaTimeMS: src.KafkaTimeMS, ingestedAt: src.IngestedAt}
	b.c.appendRow(&m, rec, derr, raw)
}

// Len is the number of rows.
func (b *RowBuilder) Len() int { return b.c.n }

// Reset drops every row and keeps the buffers.
func (b *RowBuilder) Reset() { b.c.reset() }

// Columns appends to dst rows [lo, hi) of every landing column, one typed
// slice per column in LandingColumns order ([]uint8, []string, []int64
// seconds for a DateTime, [][]string for an array, ...), and returns it:
// what the ingester appends to a clickhouse-go batch, column by column.
func (b *RowBuilder) Columns(dst []any, lo, hi int) []any { return b.c.slices(dst, lo, hi) }

// AppendTo appends rows [lo, hi) to a clickhouse-go batch prepared for
// the landing insert (its columns in LandingColumns order), the way the
// ingester sends one block.
func (b *RowBuilder) AppendTo(bt driver.Batch, lo, hi int) error { return b.c.appendTo(bt, lo, hi) }
