// Package ingest moves error events from Kafka into ClickHouse.
//
// A Pipeline consumes one or more topics with a consumer group (Group: a
// partition moves in a rebalance only once the batches fetched from it are
// stored or given up, group.go) in three stages, each a type that owns its
// state, joined by channels:
//
//   - the fetcher (fetch.go) cuts the stream into batches bounded by rows,
//     bytes and time;
//   - the decoder (decode.go) drops replays (replay.go), decodes each batch
//     on all cores with parse.Decoder (order inside a partition is kept)
//     and drops producer re-sends (dedup.go), building each row in column
//     buffers whose fields, appendRow, slices and keepOnly are generated
//     from schema.RowColumns (columns_gen.go; helpers in columns.go);
//   - the writer (write.go) writes each batch with ONE columnar INSERT
//     (insert.go, sent in blocks of InsertBlockRows) into the `landing`
//     table, whose materialized views fan the rows out to errors,
//     dead_letter, lookups, rollups and ingest_progress, and only after
//     ClickHouse accepted a batch commits its Kafka offsets (ledger.go,
//     commit.go); on a cluster it hands the rows a shard refused to its
//     park lot (park.go).
//
// A decoded batch carries its acknowledgement to the writer, which calls it
// once the batch is settled; the ack gives the batch and its buffers back
// to the stages that reuse them.
//
// Delivery: every consumed message becomes exactly one landing row (a
// decoded row, dead=0, or a dead-letter row, dead=1), except producer
// re-sends of an event_id seen within the in-memory dedup window. A message
// of an OTLP topic (Config.OTLP, package otlpin) becomes one row per failed
// protocol reply it holds, at (offset, kafka_index), or one dead-letter row;
// its rows are appended together and an insert block never splits them
// (columns.blockEnd), so a message is stored whole or not at all. Replays
// (after a crash, a rebalance or a rewound offset) are filtered against
// ingest_progress, the highest offset per partition that ClickHouse holds,
// so they write nothing twice; progress is read only once the server no
// longer runs an insert a former owner left behind (settle.go). See
// docs/ingest.md for the argument.
//
// Memory: a batch's messages, its column buffers and the string arena behind
// them are reused from batch to batch. Strings in the column buffers are
// borrowed from the arena and die when the buffers are recycled (when the
// batch is acknowledged, after its insert succeeded); only the decoder that
// fills them and the writer that sends them see them, one after the other.
//
// Failure: transient ClickHouse errors are retried forever with capped,
// jittered backoff while fetching stops (bounded memory); permanent errors
// (schema mismatch, missing table) stop the pipeline and flip /readyz, but
// a missing table after rows were stored is retried for a grace first (a
// migration creating a view, grace.go). On a cluster (Config.Shards) each
// shard gets its rows directly (shards.go), and with a Group source the
// rows of a shard that refuses them wait in the writer's park lot, a
// sub-stage of its own (parkLot, park.go: the parked rows in fetch order,
// their partitions paused, the retry's backoff), while the others flow.
//
// Stored text is capped at TextMax (8 KiB) per message or violation
// description.
package ingest
