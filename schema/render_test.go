package schema

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestRenderGolden pins the DDL of each rendering. Refresh with
// go test ./schema -run TestRenderGolden -update and review the diff.
func TestRenderGolden(t *testing.T) {
	cases := []struct {
		file   string
		server string
		opts   Options
	}{
		{"render-18.16.sql", "18.16.1", Options{}},
		{"render-19.6.sql", "19.6.2.11", Options{}},
		{"render-25.8.sql", "25.8", Options{}},
		{"render-25.8-cluster.sql", "25.8", Options{Cluster: "errtrail_cluster"}},
		{"render-18.16-cluster.sql", "18.16.1", Options{Cluster: "errtrail_cluster"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			v, err := ParseServerVersion(c.server)
			if err != nil {
				t.Fatal(err)
			}
			got := SQL(Render(v, c.opts))
			path := filepath.Join("testdata", c.file)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("rendering for %s differs from %s; run with -update and review the diff", c.server, path)
			}
		})
	}
}

func TestFeaturesOf(t *testing.T) {
	cases := []struct {
		v    string
		want Features
	}{
		{"18.16.1", Features{}},
		{"19.1.6", Features{Codecs: true}},
		{"19.3.3", Features{Codecs: true, LowCardinality: true}},
		{"19.6.2.11", Features{Codecs: true, LowCardinality: true, TTL: true}},
		{"19.11.3.11", Features{Codecs: true, LowCardinality: true, TTL: true, DoubleDelta: true}},
		{"20.1.2.4", Features{Codecs: true, LowCardinality: true, TTL: true, DoubleDelta: true, SkipIndexes: true, AlterIfNotExists: true}},
		{"22.2.1", Features{Codecs: true, LowCardinality: true, TTL: true, DoubleDelta: true, SkipIndexes: true, AlterIfNotExists: true, InsertDedup: true}},
		{"25.8.3.66", Features{Codecs: true, LowCardinality: true, TTL: true, DoubleDelta: true, SkipIndexes: true, AlterIfNotExists: true, InsertDedup: true}},
	}
	for _, c := range cases {
		v, err := ParseServerVersion(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if got := FeaturesOf(v); got != c.want {
			t.Errorf("FeaturesOf(%s) = %+v; want %+v", c.v, got, c.want)
		}
	}
}

func TestParseServerVersion(t *testing.T) {
	for _, s := range []string{"", "25", "x.1", "25.-1"} {
		if _, err := ParseServerVersion(s); err == nil {
			t.Errorf("ParseServerVersion(%q) succeeded; want an error", s)
		}
	}
	v, err := ParseServerVersion("18.16.1")
	if err != nil || v != (ServerVersion{18, 16, 1}) {
		t.Errorf("ParseServerVersion(18.16.1) = %v, %v", v, err)
	}
}

// The old rendering must not use anything 18.16 rejects (found by running it:
// CODEC and TTL are syntax errors, LowCardinality needs an experimental
// setting, INDEX is unknown).
func TestOldRenderingAvoidsNewSyntax(t *testing.T) {
	sql := SQL(Render(Oldest, Options{}))
	for _, bad := range []string{"CODEC(", "TTL ", "LowCardinality", "INDEX ", "DateTime64", "non_replicated_deduplication_window"} {
		if strings.Contains(sql, bad) {
			t.Errorf("18.16 rendering contains %q", bad)
		}
	}
}

// Queries, dashboards and the alerter must see the same column names and
// types on every server: LowCardinality(String) counts as String.
func TestQueryTypesEqualAcrossRenderings(t *testing.T) {
	old, modern := Render(Oldest, Options{}), Render(Modern, Options{})
	for i := range old {
		if old[i].Version != modern[i].Version || len(old[i].Statements) != len(modern[i].Statements) {
			t.Fatalf("migration %d has a different shape on old and modern servers", i)
		}
	}
	strip := func(s string) string {
		s = strings.ReplaceAll(s, "LowCardinality(String)", "String")
		s = strings.ReplaceAll(s, "ADD COLUMN IF NOT EXISTS ", "ADD COLUMN ")
		var out []string
		for _, line := range strings.Split(s, "\n") {
			if i := strings.Index(line, " CODEC("); i >= 0 {
				line = line[:i] + strings.TrimPrefix(line[strings.LastIndex(line, ")"):], ")")
			}
			if strings.HasPrefix(strings.TrimSpace(line), "INDEX ") || strings.HasPrefix(line, "TTL ") || strings.HasPrefix(line, "SETTINGS ") {
				continue
			}
			out = append(out, line)
		}
		return strings.ReplaceAll(strings.Join(out, "\n"), "),\n)", ")\n)")
	}
	for i := range old {
		for j := range old[i].Statements {
			a, b := strip(old[i].Statements[j]), strip(modern[i].Statements[j])
			if a != b {
				t.Errorf("migration %d statement %d differs beyond codecs/indexes/TTL/LowCardinality/IF NOT EXISTS:\nold:\n%s\nmodern:\n%s", i, j, a, b)
			}
		}
	}
}

func TestClusterRendering(t *testing.T) {
	sql := SQL(Render(Modern, Options{Cluster: "c1", Database: "et"}))
	for _, want := range []string{
		"CREATE DATABASE IF NOT EXISTS et ON CLUSTER c1",
		"CREATE TABLE IF NOT EXISTS et.errors_local ON CLUSTER c1",
		"ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/et/errors_local', '{replica}', ingested_at)",
		"ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/et/errors_1m_local', '{replica}', (n, retry_after_ms_sum, with_retry_after, untyped_5xx))",
		"ENGINE = Distributed(c1, et, landing_local, cityHash64(kafka_topic, kafka_partition))",
		"ENGINE = Distributed(c1, et, errors_local, cityHash64(kafka_topic, kafka_partition))",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS et.mv1_errors ON CLUSTER c1 TO et.errors_local AS",
		"FROM et.landing_local",
		"'/clickhouse/tables/all/et/schema_migrations', '{shard}-{replica}'",
	} {
		if !strings.Contains(sql, want) {
			t.Errorf("cluster rendering lacks %q", want)
		}
	}
	if strings.Contains(sql, "non_replicated_deduplication_window") {
		t.Error("cluster rendering sets non_replicated_deduplication_window on replicated tables")
	}
	if q := LookupQuery(Options{Cluster: "c1", Database: "et"}); strings.Count(q, "FROM et.error_lookup WHERE id = ?") != 3 ||
		!strings.HasSuffix(q, "SETTINGS distributed_product_mode = 'local'") || q != LookupQuery(Options{Database: "et"}) {
		t.Errorf("the lookup must be one text on one server and on a cluster, each shard answering the subqueries from its own error_lookup:\n%s", q)
	}
}

func TestChecksums(t *testing.T) {
	a := Render(Modern, Options{})
	b := Render(Modern, Options{RetentionDays: 7, RollupRetentionDays: 400})
	c := Render(Oldest, Options{})
	for i := range a {
		if a[i].Checksum != b[i].Checksum {
			t.Errorf("migration %d: checksum depends on retention days", i)
		}
		if i > 0 && a[i].Checksum == c[i].Checksum {
			t.Errorf("migration %d: same checksum for 18.16 and 25.8 renderings", i)
		}
	}
	if !strings.Contains(SQL(b), "INTERVAL 7 DAY") || !strings.Contains(SQL(b), "INTERVAL 400 DAY") {
		t.Error("retention days are not rendered into the TTLs")
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{Database: "a-b"}, {Database: "x; DROP"}, {Cluster: "c'1"}, {RetentionDays: -1}} {
		if o.Validate() == nil {
			t.Errorf("Validate(%+v) = nil; want an error", o)
		}
	}
	if err := (Options{Database: "errtrail_test_1", Cluster: "main"}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestLandingColumnsMatchDesign(t *testing.T) {
	want := "dead event_id observed_at observed_at_ms ingested_at kafka_topic kafka_partition kafka_offset " +
		"source_kind source_id agent endpoint caller method attempt http_request_id jsonrpc_id message_id task_id " +
		"idempotency_key_hash protocol binding envelope http_status grpc_status jsonrpc_code code reason domain kind " +
		"typed retryable retryable_source retry_after_ms retry_after_source limit_name scope error_id request_id message " +
		"violation_fields violation_descriptions findings dl_reason dl_error raw source_version " +
		"trace_id span_id origin inferred kafka_index"
	var got []string
	for _, c := range LandingColumns {
		got = append(got, c.Name)
	}
	if strings.Join(got, " ") != want {
		t.Errorf("landing columns:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	ins := LandingInsert(Options{Database: "x"})
	if !strings.HasPrefix(ins, "INSERT INTO x.landing (dead, event_id, observed_at,") || !strings.HasSuffix(ins, "dl_error, raw, source_version, trace_id, span_id, origin, inferred, kafka_index)") {
		t.Errorf("LandingInsert = %s", ins)
	}
}

func TestInsertSettings(t *testing.T) {
	if s := InsertSettings(Oldest, "tok"); s != nil {
		t.Errorf("InsertSettings(18.16) = %v; want nil", s)
	}
	s := InsertSettings(Modern, "tok")
	if s["insert_deduplication_token"] != "tok" || s["deduplicate_blocks_in_dependent_materialized_views"] != 1 {
		t.Errorf("InsertSettings(25.8) = %v", s)
	}
	if _, ok := s["insert_distributed_sync"]; ok {
		t.Errorf("InsertSettings(25.8) on one server = %v; want no distributed setting", s)
	}
	// On a cluster every insert waits for its shards; 18.16 keeps rollup
	// blocks that equal another batch's, current releases deduplicate the
	// views by the batch's token.
	cl := Options{Cluster: "errtrail"}
	want := map[string]map[string]any{
		"18.16": {"insert_distributed_sync": 1, "insert_deduplicate": 0},
		"25.8": {"insert_distributed_sync": 1, "insert_deduplicate": 1, "insert_deduplication_token": "tok",
			"deduplicate_blocks_in_dependent_materialized_views": 1},
	}
	for v, w := range map[ServerVersion]map[string]any{Oldest: want["18.16"], Modern: want["25.8"]} {
		if got := InsertSettingsFor(v, cl, "tok"); !reflect.DeepEqual(got, w) {
			t.Errorf("InsertSettingsFor(%s, cluster) = %v; want %v", v, got, w)
		}
	}
	if got := InsertSettingsFor(Oldest, Options{}, "tok"); got != nil {
		t.Errorf("InsertSettingsFor(18.16, one server) = %v; want nil", got)
	}
}

// Migration 006 (findings_1h, read by report/): the same layout as the
// other rollups on every rendering. That its view runs before the progress
// view is TestUnitViewNameOrder's job.
func TestFindings1hRendering(t *testing.T) {
	find := func(migs []Migration) Migration {
		for _, m := range migs {
			if m.Version == 6 {
				return m
			}
		}
		t.Fatal("no migration 006")
		return Migration{}
	}
	old := SQL([]Migration{find(Render(Oldest, Options{}))})
	for _, want := range []string{
		"CREATE TABLE IF NOT EXISTS errtrail.findings_1h\n",
		"ENGINE = SummingMergeTree((n, breaking))\nPARTITION BY toYYYYMMDD(hour)\nORDER BY (agent, hour, source_kind, finding, with_error_id)",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv7_findings_1h TO errtrail.findings_1h AS",
		"FROM errtrail.landing\nARRAY JOIN arrayPushFront(findings, '') AS finding\nWHERE dead = 0\n",
		"toStartOfHour(observed_at) AS hour",
	} {
		if !strings.Contains(old, want) {
			t.Errorf("18.16 rendering of 006 lacks %q:\n%s", want, old)
		}
	}
	modern := SQL([]Migration{find(Render(Modern, Options{RollupRetentionDays: 120}))})
	for _, want := range []string{
		"agent LowCardinality(String)", "finding LowCardinality(String)", "hour DateTime CODEC(DoubleDelta, ZSTD(1))",
		"TTL hour + INTERVAL 120 DAY", "SETTINGS non_replicated_deduplication_window = 1000",
	} {
		if !strings.Contains(modern, want) {
			t.Errorf("25.8 rendering of 006 lacks %q", want)
		}
	}
	cluster := SQL([]Migration{find(Render(Modern, Options{Cluster: "c1", Database: "et"}))})
	for _, want := range []string{
		"CREATE TABLE IF NOT EXISTS et.findings_1h_local ON CLUSTER c1",
		"ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/et/findings_1h_local', '{replica}', (n, breaking))",
		"ENGINE = Distributed(c1, et, findings_1h_local, rand())",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS et.mv7_findings_1h ON CLUSTER c1 TO et.findings_1h_local AS",
		"FROM et.landing_local",
	} {
		if !strings.Contains(cluster, want) {
			t.Errorf("cluster rendering of 006 lacks %q", want)
		}
	}
}

// TestUnitShardOfFollowsTheShardingKey: ShardOf evaluates the sharding key
// itself; a change to the rendering's key must change it too.
func TestUnitShardOfFollowsTheShardingKey(t *testing.T) {
	if kafkaShard != "cityHash64(kafka_topic, kafka_partition)" {
		t.Fatalf("the Distributed tables shard by %s now: change ShardOf to evaluate the same key", kafkaShard)
	}
}
