package schema

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// TestMigration9UpgradesAndStoresTraces: a database at migration 007 with a
// row in it, whose migration 009 stopped half way (one landing column
// added), is brought to 009 by Migrate without an error on 18.16 (no ADD
// COLUMN IF NOT EXISTS there: apply skips the column that exists), keeps
// its row, still takes an insert of the old column list (an ingester of
// the previous release during a rolling deploy), and stores the new
// columns: error_traces gets every decoded row, error_lookup indexes the
// trace id (and no empty one), a dead-letter row reaches neither.
func TestMigration9UpgradesAndStoresTraces(t *testing.T) {
	conn, opts, v := openDB(t)
	ctx := context.Background()
	for _, m := range Render(v, opts) {
		if m.Version > 7 {
			break
		}
		for _, st := range m.Statements {
			if err := conn.Exec(ctx, st); err != nil {
				t.Fatalf("migration %03d: %v", m.Version, err)
			}
		}
	}
	now := time.Now()
	if err := insertOld(ctx, conn, opts, now, "before"); err != nil {
		t.Fatal(err)
	}
	// Half of migration 009: the first ALTER ran, the rest did not.
	if err := conn.Exec(ctx, "ALTER TABLE "+opts.Database+".landing ADD COLUMN trace_id String"); err != nil {
		t.Fatal(err)
	}
	res := migrate(t, conn, opts)
	if !strings.Contains(fmt.Sprint(res.Applied), "9") {
		t.Fatalf("Migrate after a half-finished 009: %+v; want 9 applied", res)
	}
	if err := insertOld(ctx, conn, opts, now, "old-ingester"); err != nil {
		t.Fatalf("an insert with the column list of migration 001 after 009: %v", err)
	}
	const trace, span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	if err := insertLanding(t, conn, opts, now,
		row{"event_id": "traced", "agent": "a1", "trace_id": trace, "span_id": span, "origin": "otlp",
			"inferred": []string{"protocol", "kind"}, "kafka_index": uint32(3)},
		row{"event_id": "plain", "agent": "a1", "origin": "raw"},
		row{"dead": uint8(1), "event_id": "poison", "agent": "a1", "trace_id": "ffffffffffffffffffffffffffffffff", "dl_reason": "bad_json"},
	); err != nil {
		t.Fatal(err)
	}
	db := opts.Database
	if n := count(t, conn, "SELECT count() FROM "+db+".errors"); n != 4 {
		t.Errorf("errors holds %d rows; want 4 (before, old-ingester, traced, plain)", n)
	}
	var origin, gotTrace, gotSpan string
	var inferred []string
	var index uint32
	if err := conn.QueryRow(ctx, "SELECT origin, trace_id, span_id, inferred, kafka_index FROM "+db+".error_traces WHERE event_id = 'traced'").
		Scan(&origin, &gotTrace, &gotSpan, &inferred, &index); err != nil {
		t.Fatal(err)
	}
	if origin != "otlp" || gotTrace != trace || gotSpan != span || strings.Join(inferred, ",") != "protocol,kind" || index != 3 {
		t.Errorf("error_traces row = %q %q %q %v %d", origin, gotTrace, gotSpan, inferred, index)
	}
	if n := count(t, conn, "SELECT count() FROM "+db+".error_traces"); n != 3 {
		t.Errorf("error_traces holds %d rows; want 3 (the decoded rows since 009, not the dead letter)", n)
	}
	if n := count(t, conn, "SELECT count() FROM "+db+".error_traces WHERE event_id = 'old-ingester' AND origin = '' AND trace_id = ''"); n != 1 {
		t.Errorf("the old ingester's row in error_traces: %d; want 1 with empty origin and trace", n)
	}
	if n := count(t, conn, "SELECT count() FROM "+db+".error_lookup WHERE id_kind = 'trace_id'"); n != 1 {
		t.Errorf("error_lookup holds %d trace ids; want 1 (no empty one, not the dead letter's)", n)
	}
	rows, err := LookupAny(ctx, conn, opts, trace)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].EventID != "traced" {
		t.Errorf("LookupAny(trace id) = %d rows %+v; want the traced row", len(rows), rows)
	}
	tr, err := Traces(ctx, conn, opts, rows)
	if err != nil {
		t.Fatal(err)
	}
	if got := tr["traced"]; got.TraceID != trace || got.SpanID != span || got.Origin != "otlp" {
		t.Errorf("Traces = %+v", tr)
	}
}

// insertOld inserts one row with the column list of migration 001 only.
func insertOld(ctx context.Context, conn driver.Conn, opts Options, now time.Time, eventID string) error {
	names := make([]string, len(landingV1))
	for i, c := range landingV1 {
		names[i] = c.Name
	}
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+opts.Database+".landing ("+strings.Join(names, ", ")+")")
	if err != nil {
		return err
	}
	defer batch.Abort()
	d := landingDefaults(now)
	d["event_id"] = eventID
	vals := make([]any, len(landingV1))
	for i, c := range landingV1 {
		vals[i] = d[c.Name]
	}
	if err := batch.Append(vals...); err != nil {
		return err
	}
	return batch.Send()
}
