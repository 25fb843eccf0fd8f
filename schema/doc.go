// Package schema owns errtrail's ClickHouse schema: versioned, idempotent
// migrations rendered for the server they run on, the few queries other
// packages share (Lookup, Progress, Retain), and what every reader of the
// tables needs (readers.go): the table names (Table*, the only spelling of
// them outside the DDL), ValidDatabase (the check before a database name
// is formatted into SQL) and the sorting of the store's failures into
// UnavailableError (retry later) and ConfigError (fix the settings),
// StoreError.
//
// The error row is declared once, in RowColumns (row.go): name, type, the
// migration that adds it, the table that keeps it, what fills it, its JSON
// key and the ingester's expression for it. LandingColumns, errors'
// columns, the migrations' column lists, ErrorRow and the ingester's
// buffers (go generate) derive from it; docs/schema.md, "Adding a column".
//
// The ingester makes one insert per batch into landing (ENGINE = Null), with
// the columns of LandingColumns in that order (InsertInto). Materialized
// views fan each inserted block out to errors, dead_letter, error_lookup,
// errors_1m_v2, outcomes_1m, callers_1m, findings_1h and ingest_progress
// (errors_1m, with caller in its key, holds what was stored before
// migration 010; readers of the minute counts sum both, docs/schema.md). Progress tells the ingester,
// after a crash or rebalance, which offsets are already stored, so a replay
// writes nothing twice; see docs/schema.md for the whole argument and its
// limits.
//
// Render(version, Options) gives the DDL for a server version: LowCardinality,
// codecs, TTL, data-skipping indexes and insert deduplication only where the
// server has them (FeaturesOf), with the same column names and query-visible
// types everywhere. Options.Cluster renders ON CLUSTER DDL with Replicated*
// engines and Distributed tables. Migrate applies what is missing and records
// each migration with a checksum in schema_migrations; Migrator.Dial lets it
// run an ALTER of a replicated table shard by shard on servers before 20.1,
// whose distributed DDL worker can stop on it (alter.go).
//
// Caveats: errors, dead_letter and error_lookup are ReplacingMergeTree, so a
// query that must count each event once uses FINAL, LIMIT 1 BY or uniqExact
// (Lookup does); the rollups count stored messages and are summed with sum().
// On servers without TTL (before 19.6) call Retain periodically.
package schema
