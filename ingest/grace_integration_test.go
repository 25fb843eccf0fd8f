package ingest_test

import (
	"context"
	"testing"
	"time"

	"github.com/errtrail/errtrail/ingest"
	"github.com/prometheus/client_golang/prometheus"
)

// TestMissingViewTableMidStreamIsRetried: after ingest stored rows, a table
// that one of landing's views writes to goes missing (renamed away) and
// comes back, as one does for a moment on ClickHouse 18.16 while a
// migration creates or drops a view (schema's TestUpgradeTo010UnderInserts).
// Meanwhile the server refuses every insert into landing whole with
// UNKNOWN_TABLE.
// Ingest retries them instead of stopping, stores nothing while refused,
// and once the table is back stores every event once. (A table missing
// before anything was stored stops ingest at once:
// TestPermanentFailureStopsWithoutSkipping; one missing past the grace
// too: TestUnitWriterUnknownTableGraceEnds.)
func TestMissingViewTableMidStreamIsRetried(t *testing.T) {
	s := newStack(t, 2)
	db := s.sopt.Database
	exec := func(q string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	countTarget := func() uint64 {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var n uint64
		if err := s.conn.QueryRow(ctx, "SELECT count() FROM "+db+".grace_target").Scan(&n); err != nil {
			t.Fatalf("counting grace_target: %v", err)
		}
		return n
	}
	const target = "(kafka_offset Int64) ENGINE = MergeTree ORDER BY tuple()"
	exec("CREATE TABLE " + db + ".grace_target " + target)
	exec("CREATE MATERIALIZED VIEW " + db + ".grace_view TO " + db + ".grace_target AS SELECT kafka_offset FROM " + db + ".landing")

	const n = 1000
	s.produce(t, goodEvents("grace", 0, n))
	reg := prometheus.NewRegistry()
	m := ingest.NewMetrics(reg)
	cfg := s.config(testLogger(t), m)
	cfg.UnknownTableGrace = 10 * time.Minute // the test, not the grace, decides when the table is back
	run := s.start(t, cfg)
	s.waitFor(t, 2*time.Minute, "the first events stored", func(c counts) bool { return c.errors >= n })
	if got := countTarget(); got != n {
		t.Fatalf("grace_target holds %d rows after the first events; want %d", got, n)
	}

	// Renamed away and back, not dropped and created again: on 18.16 an
	// insert that finds a MergeTree table between its creation and its
	// start-up crashes the server (a null background task woken after the
	// write; seen with CREATE TABLE here), whereas a renamed table is one
	// that runs. The insert in flight, if any, holds the table until done.
	exec("RENAME TABLE " + db + ".grace_target TO " + db + ".grace_away")
	s.produce(t, goodEvents("grace", n, n))
	waitUntil(t, 2*time.Minute, "an insert refused on the missing table", func() bool {
		if f := run.p.Failure(); f != nil {
			t.Fatalf("ingest stopped on the missing table: %v", f)
		}
		return value(m.InsertRetries.WithLabelValues(string(ingest.ClassSchema))) >= 1
	})
	c, err := s.counts(t)
	if err != nil {
		t.Fatal(err)
	}
	if c.errors != n || c.landed != n {
		t.Fatalf("while the table was missing: %s; want the first %d events only (a refused insert stores nothing)", c, n)
	}
	if f := run.p.Failure(); f != nil {
		t.Fatalf("ingest stopped on the missing table: %v", f)
	}

	exec("RENAME TABLE " + db + ".grace_away TO " + db + ".grace_target")
	s.waitFor(t, 2*time.Minute, "every event stored", func(c counts) bool { return c.errors >= 2*n })
	if f := run.p.Failure(); f != nil {
		t.Fatalf("ingest stopped: %v", f)
	}
	if err := run.stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
	c, err = s.counts(t)
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, c, 2*n, 0)
	if got := countTarget(); got != 2*n {
		t.Errorf("grace_target holds %d rows after it came back; want the %d events once", got, 2*n)
	}
	if v := value(m.PermanentFailure); v != 0 {
		t.Errorf("permanent_failure = %v; want 0", v)
	}
	if v := value(m.InsertFailures.WithLabelValues(string(ingest.ClassSchema))); v != 0 {
		t.Errorf("insert_failures_total{class=schema} = %v; want 0", v)
	}
	checkCommittedToEnd(t, s, 2)
}
