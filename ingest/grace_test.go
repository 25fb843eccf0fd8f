package ingest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func unknownTable() error {
	return &clickhouse.Exception{Code: 60, Message: "Table errtrail.mv4_errors_1m_v2 doesn't exist."}
}

// TestUnitSchemaGraceAllows: UNKNOWN_TABLE is retried only after rows were
// stored, for the grace from the first refusal in a row; a stored insert
// starts it anew, a partly stored one does not; other errors, and a grace
// of 0 or less, are never retried.
func TestUnitSchemaGraceAllows(t *testing.T) {
	const grace = 30 * time.Second
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	var g schemaGrace
	if _, ok := g.allows(unknownTable(), grace, t0); ok {
		t.Fatal("UNKNOWN_TABLE before anything was stored is retried; want permanent at once")
	}
	g.stored()
	for _, c := range []struct {
		name string
		err  error
	}{
		{"no such column", &clickhouse.Exception{Code: 16}},
		{"auth", &clickhouse.Exception{Code: 516}},
		{"not a server exception", errors.New("table missing")},
	} {
		if _, ok := g.allows(c.err, grace, t0); ok {
			t.Errorf("%s: retried; only UNKNOWN_TABLE is", c.name)
		}
	}
	if _, ok := g.allows(unknownTable(), 0, t0); ok {
		t.Error("grace 0: retried")
	}
	if _, ok := g.allows(unknownTable(), -time.Second, t0); ok {
		t.Error("grace < 0: retried")
	}
	g = schemaGrace{}
	g.stored()
	if left, ok := g.allows(unknownTable(), grace, t0); !ok || left != grace {
		t.Fatalf("first refusal: %v %v; want retried with %v left", left, ok, grace)
	}
	if left, ok := g.allows(unknownTable(), grace, t0.Add(grace-time.Second)); !ok || left != time.Second {
		t.Errorf("a second before the grace ends: %v %v; want retried with 1s left", left, ok)
	}
	g.storedSome() // another shard stored: the refusals go on counting
	if _, ok := g.allows(unknownTable(), grace, t0.Add(grace)); ok {
		t.Error("at the grace's end: retried; want permanent")
	}
	g.stored()
	if left, ok := g.allows(unknownTable(), grace, t0.Add(time.Hour)); !ok || left != grace {
		t.Errorf("after a stored insert: %v %v; want a new grace of %v", left, ok, grace)
	}
}

// TestUnitWriterRetriesUnknownTableAfterStoring: once a batch is stored,
// an insert refused with UNKNOWN_TABLE (a migration creating a view) is
// retried and stored, committed and acknowledged once, not an exit.
func TestUnitWriterRetriesUnknownTableAfterStoring(t *testing.T) {
	var log []string
	w := testWriter(&fakeConn{errs: []error{nil, unknownTable(), unknownTable()}, log: &log}, &log)
	if err := writeAll(w, decodedSlot(&log, 2, 1, 2), decodedSlot(&log, 4, 3, 4)); err != nil {
		t.Fatalf("error %v; want the refused batch stored after retries", err)
	}
	want := []string{"insert [1 2]", "commit t/0:2", "ack", "refused", "refused", "insert [3 4]", "commit t/0:4", "ack"}
	if !slices.Equal(log, want) {
		t.Errorf("events %q; want %q", log, want)
	}
	if got := testutil.ToFloat64(w.m.InsertRetries.WithLabelValues(string(ClassSchema))); got != 2 {
		t.Errorf("schema retries counted %v; want 2", got)
	}
	if got := testutil.ToFloat64(w.m.InsertFailures.WithLabelValues(string(ClassSchema))); got != 0 {
		t.Errorf("schema failures counted %v; want 0", got)
	}
}

// TestUnitWriterUnknownTableGraceEnds: a table that stays missing past the
// grace stops the writer with a permanent schema error; the refused batch
// is neither committed nor acknowledged.
func TestUnitWriterUnknownTableGraceEnds(t *testing.T) {
	var log []string
	errs := []error{nil}
	for range 100000 { // far more refusals than a 20 ms grace with 1 ms backoffs takes
		errs = append(errs, unknownTable())
	}
	w := testWriter(&fakeConn{errs: errs, log: &log}, &log)
	w.cfg.UnknownTableGrace = 20 * time.Millisecond
	err := writeAll(w, decodedSlot(&log, 2, 1, 2), decodedSlot(&log, 4, 3, 4))
	var perm *PermanentError
	if !errors.As(err, &perm) || perm.Class != ClassSchema {
		t.Fatalf("error %v; want a permanent schema error once the grace ended", err)
	}
	if !slices.Equal(log[:3], []string{"insert [1 2]", "commit t/0:2", "ack"}) {
		t.Errorf("events %q; want the first batch stored, committed and acknowledged", log)
	}
	for _, e := range log[3:] {
		if e != "refused" {
			t.Fatalf("events after the first batch %q; want refusals only: no commit, no ack", log[3:])
		}
	}
	if got := testutil.ToFloat64(w.m.InsertFailures.WithLabelValues(string(ClassSchema))); got != 1 {
		t.Errorf("schema failures counted %v; want 1", got)
	}
}

// TestUnitWriterOtherSchemaErrorAfterStoringIsPermanent: the grace is for
// UNKNOWN_TABLE only; a column of another type stops the writer at once,
// stored rows or not.
func TestUnitWriterOtherSchemaErrorAfterStoringIsPermanent(t *testing.T) {
	var log []string
	w := testWriter(&fakeConn{errs: []error{nil, &clickhouse.Exception{Code: 53, Message: "Type mismatch"}}, log: &log}, &log)
	err := writeAll(w, decodedSlot(&log, 2, 1, 2), decodedSlot(&log, 4, 3, 4))
	var perm *PermanentError
	if !errors.As(err, &perm) || perm.Class != ClassSchema {
		t.Fatalf("error %v; want a permanent schema error", err)
	}
	if want := []string{"insert [1 2]", "commit t/0:2", "ack", "refused"}; !slices.Equal(log, want) {
		t.Errorf("events %q; want %q", log, want)
	}
}
