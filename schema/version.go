package schema

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// ServerVersion is a ClickHouse release as reported by SELECT version(),
// e.g. 18.16.1 or 25.8.3.66. Only Major and Minor select features.
type ServerVersion struct {
	Major, Minor, Patch int
}

// Oldest and Modern are the two renderings errtrail is tested with: Debian's
// clickhouse-server on the development machines and a current release
// (production; checked in-process with chdb by scripts/check-modern-sql).
var (
	Oldest = ServerVersion{18, 16, 1}
	Modern = ServerVersion{25, 8, 0}
)

// ParseServerVersion reads "25.8.3.66", "18.16.1" or "25.8".
func ParseServerVersion(s string) (ServerVersion, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) < 2 {
		return ServerVersion{}, fmt.Errorf("schema: server version %q: want MAJOR.MINOR[.PATCH...]", s)
	}
	var n [3]int
	for i := 0; i < 3 && i < len(parts); i++ {
		v, err := strconv.Atoi(parts[i])
		if err != nil || v < 0 {
			return ServerVersion{}, fmt.Errorf("schema: server version %q: part %d is not a number", s, i+1)
		}
		n[i] = v
	}
	return ServerVersion{n[0], n[1], n[2]}, nil
}

func (v ServerVersion) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// AtLeast reports whether v is major.minor or newer.
func (v ServerVersion) AtLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// DetectVersion asks the server for its version.
func DetectVersion(ctx context.Context, conn driver.Conn) (ServerVersion, error) {
	var s string
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&s); err != nil {
		return ServerVersion{}, fmt.Errorf("schema: SELECT version(): %w", err)
	}
	return ParseServerVersion(s)
}

// Features are the optional server capabilities the DDL uses. Each is on only
// from the first release where it is generally available (not behind an
// allow_experimental_* setting); the table in docs/schema.md gives the source.
type Features struct {
	LowCardinality bool // 19.3: allow_experimental_low_cardinality_type removed, type GA
	Codecs         bool // 19.1: per-column CODEC(ZSTD, LZ4HC, Delta)
	DoubleDelta    bool // 19.11: DoubleDelta and Gorilla codecs
	TTL            bool // 19.6: table and column TTL
	SkipIndexes    bool // 20.1: data-skipping indexes GA (bloom_filter since 19.6, tokenbf_v1 since 19.5, experimental)
	// AlterIfNotExists: ALTER TABLE ... ADD COLUMN IF NOT EXISTS (not on
	// 18.16; assumed from 20.1, the oldest release after it checked here).
	AlterIfNotExists bool
	// InsertDedup (22.2): insert_deduplication_token, with
	// non_replicated_deduplication_window on the view targets and
	// deduplicate_blocks_in_dependent_materialized_views, so the ingester's
	// retry of a batch that failed half way through the views writes each
	// view's block once. See InsertSettings.
	InsertDedup bool
	// DateTime64 (20.1) is deliberately not used: observed_at stays DateTime
	// and observed_at_ms carries the milliseconds, so the type a query sees is
	// the same on every server.
}

// FeaturesOf returns the features errtrail uses on a server of version v.
func FeaturesOf(v ServerVersion) Features {
	return Features{
		LowCardinality:   v.AtLeast(19, 3),
		Codecs:           v.AtLeast(19, 1),
		DoubleDelta:      v.AtLeast(19, 11),
		TTL:              v.AtLeast(19, 6),
		SkipIndexes:      v.AtLeast(20, 1),
		AlterIfNotExists: v.AtLeast(20, 1),
		InsertDedup:      v.AtLeast(22, 2),
	}
}

// DedupWindow is the number of recent insert blocks each view target
// remembers (non_replicated_deduplication_window) where InsertDedup is on.
const DedupWindow = 1000

// InsertSettings returns the query settings for one landing insert. token
// must identify the batch and stay the same on every retry of that batch
// (for example the topic, partition and offset range of each partition in
// it); a different batch must get a different token. On servers without
// InsertDedup it returns nil: a retry after a failure half way through the
// views can then count that batch twice in errors_1m and outcomes_1m (errors,
// dead_letter and error_lookup still collapse it), see docs/schema.md.
func InsertSettings(v ServerVersion, token string) map[string]any {
	return InsertSettingsFor(v, Options{}, token)
}

// InsertSettingsFor is InsertSettings for the schema opts renders. On a
// cluster (opts.Cluster) two more things hold:
//
//   - The insert into the Distributed landing table is synchronous
//     (insert_distributed_sync = 1; distributed_foreground_insert is its
//     newer name, and current releases keep the old one): it returns only
//     once every shard has stored its rows, so ingest commits Kafka offsets
//     only for rows that are on their shard. By default a Distributed insert
//     returns once the rows sit in the receiving node's spool folder, and a
//     node lost before it forwards them loses them.
//   - On a server without InsertDedup (18.16), replicated tables'
//     deduplication of identical blocks is off (insert_deduplicate = 0). It
//     would drop a rollup block that merely equals another batch's (three
//     one-event batches in one minute give three identical errors_1m
//     blocks: two were lost). A retried batch then counts in the rollups as
//     on a single 18.16 server; errors still collapses it by event id.
//
// With InsertDedup the token reaches the shards with the insert's settings,
// and the views' blocks are deduplicated by it, not by their content.
func InsertSettingsFor(v ServerVersion, opts Options, token string) map[string]any {
	s := map[string]any{}
	if opts.Cluster != "" {
		s["insert_distributed_sync"] = 1
	}
	switch {
	case FeaturesOf(v).InsertDedup && token != "":
		s["insert_deduplicate"] = 1
		s["insert_deduplication_token"] = token
		s["deduplicate_blocks_in_dependent_materialized_views"] = 1
	case opts.Cluster != "":
		s["insert_deduplicate"] = 0
	}
	if len(s) == 0 {
		return nil
	}
	return s
}
