package ingest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/schema"
)

func TestColumnsRowAndKeepOnly(t *testing.T) {
	var c columns
	meta := rowMeta{topic: "t", partition: 2, kafkaTimeMS: 5000, ingestedAt: 99}
	for i := 0; i < 4; i++ {
		meta.offset = int64(i)
		rec := parse.Record{GRPCCode: -1, RetryAfterMS: -1, Caller: "caller", Retryable: parse.TriFalse,
			FieldViolations: []parse.FieldViolation{{Field: "f", Description: "d"}},
			Findings:        []parse.Finding{parse.FindBodyMissing}}
		if i == 1 {
			rec.EventID = "producer-id"
		}
		var derr *parse.DecodeError
		if i == 3 {
			derr = &parse.DecodeError{Reason: parse.ErrInvalidJSON, Path: "event", Offset: 7, Detail: "bad"}
		}
		c.appendRow(&meta, &rec, derr, []byte("raw"))
	}
	if c.n != 4 || len(c.eventID) != 4 || len(c.raw) != 4 {
		t.Fatalf("n=%d", c.n)
	}
	if c.eventID[0] != "kafka:t/2/0" || c.eventID[1] != "producer-id" {
		t.Errorf("event ids %q", c.eventID[:2])
	}
	if c.eventHash[0] != 0 || c.eventHash[1] == 0 {
		t.Errorf("dedup hashes %v: want 0 without a producer id", c.eventHash[:2])
	}
	if c.observedAt[0] != 5 || c.observedAtMS[0] != 5000 {
		t.Errorf("observed_at from the Kafka time: %d, %d", c.observedAt[0], c.observedAtMS[0])
	}
	if c.retryable[0] != 0 || c.retryAfterMS[0] != -1 || c.grpcStatus[0] != "" {
		t.Errorf("retryable %d retry_after %d grpc %q", c.retryable[0], c.retryAfterMS[0], c.grpcStatus[0])
	}
	if c.dead[3] != 1 || c.dlReason[3] != "invalid_json" || !strings.Contains(c.dlError[3], "byte 7") || c.raw[3] != "raw" {
		t.Errorf("dead row: %d %q %q %q", c.dead[3], c.dlReason[3], c.dlError[3], c.raw[3])
	}
	if c.raw[0] != "" {
		t.Errorf("raw kept for a decoded row")
	}
	c.keepOnly([]bool{true, false, true, true})
	if c.n != 3 || len(c.offset) != 3 || c.offset[1] != 2 || c.offset[2] != 3 || len(c.findings) != 3 {
		t.Fatalf("keepOnly: n=%d offsets=%v", c.n, c.offset)
	}
	if c.violationFields[1][0] != "f" || c.findings[1][0] != "body_missing" {
		t.Errorf("arrays after keepOnly: %v %v", c.violationFields[1], c.findings[1])
	}
	c.reset()
	if c.n != 0 || len(c.eventID) != 0 || len(c.flat) != 0 {
		t.Error("reset kept rows")
	}
}

func TestArenaStringsSurviveGrowth(t *testing.T) {
	var a arena
	first := a.str("hello")
	big := a.bytes(make([]byte, arenaChunk+1)) // forces a new chunk
	if first != "hello" || len(big) != arenaChunk+1 {
		t.Fatalf("got %q", first)
	}
	a.reset()
	if a.str("x") != "x" {
		t.Fatal("arena after reset")
	}
}

// TestAppendRowAllocs: steady state allocates nothing per row (the
// arena and the column slices keep their capacity).
func TestAppendRowAllocs(t *testing.T) {
	var c columns
	meta := rowMeta{topic: "t", partition: 1, offset: 5}
	rec := parse.Record{EventID: "e", Caller: "c", Agent: "a", Message: "m", GRPCCode: -1, RetryAfterMS: -1}
	for i := 0; i < 100; i++ {
		c.appendRow(&meta, &rec, nil, nil)
	}
	c.reset()
	allocs := testing.AllocsPerRun(100, func() {
		c.appendRow(&meta, &rec, nil, nil)
	})
	if allocs > 0 {
		t.Errorf("appendRow allocates %.1f times per row", allocs)
	}
}

// TestStoredTextCapsFreeText: a message or violation description longer
// than TextMax is stored as its head plus a marker with its full length,
// TextMax bytes at most, cut at a UTF-8 boundary; a text of TextMax bytes
// or less is stored unchanged, and the record itself is not changed.
func TestStoredTextCapsFreeText(t *testing.T) {
	exact := strings.Repeat("a", TextMax)
	if got := StoredText(exact); got != exact {
		t.Errorf("a text of exactly TextMax bytes was changed (%d bytes stored)", len(got))
	}
	long := strings.Repeat("€", 400000) // 1.2 MB of 3-byte runes: a cut lands inside one unless it backs off
	got := StoredText(long)
	if len(got) > TextMax || !utf8.ValidString(got) {
		t.Fatalf("stored %d bytes (valid UTF-8: %v); want at most %d, valid", len(got), utf8.ValidString(got), TextMax)
	}
	if want := "…[truncated: 1200000 bytes in all]"; !strings.HasSuffix(got, want) || !strings.HasPrefix(long, strings.TrimSuffix(got, want)) {
		t.Errorf("stored text ends %q; want the original's head and the marker %q", got[len(got)-60:], want)
	}

	var c columns
	rec := parse.Record{EventID: "e", GRPCCode: -1, RetryAfterMS: -1, Message: long,
		FieldViolations: []parse.FieldViolation{{Field: "a.b", Description: long}, {Field: "c", Description: "short"}}}
	c.appendRow(&rowMeta{topic: "t"}, &rec, nil, nil)
	if c.message[0] != got {
		t.Errorf("message column holds %d bytes; want the capped %d", len(c.message[0]), len(got))
	}
	if d := c.violationDescriptions[0]; len(d) != 2 || d[0] != got || d[1] != "short" {
		t.Errorf("violation descriptions %d values, first %d bytes; want the capped one and %q", len(d), len(d[0]), "short")
	}
	if rec.Message != long {
		t.Error("appendRow changed the record's message")
	}
}

// TestColumnsCloneIsIndependent: keepOnly on a clone (slotview.go's views)
// leaves every column of the original as it was, and the clone holds the
// rows it kept.
func TestColumnsCloneIsIndependent(t *testing.T) {
	var c columns
	for i := 0; i < 6; i++ {
		rec := parse.Record{EventID: "e" + string(rune('a'+i)), GRPCCode: -1, RetryAfterMS: -1, Message: "m",
			FieldViolations: []parse.FieldViolation{{Field: "f", Description: "d"}}}
		c.appendRow(&rowMeta{topic: "t", partition: int32(i % 2), offset: int64(i)}, &rec, nil, nil)
	}
	before := reflect.ValueOf(c)
	snapshot := make([]any, before.NumField())
	for i := range snapshot {
		if f := before.Field(i); f.Kind() == reflect.Slice {
			snapshot[i] = fmt.Sprint(f)
		}
	}
	d := c.clone()
	mask := []bool{false, true, false, true, false, true}
	d.keepOnly(mask)
	after := reflect.ValueOf(c)
	for i := range snapshot {
		if f := after.Field(i); f.Kind() == reflect.Slice && fmt.Sprint(f) != snapshot[i] {
			t.Errorf("column %s of the original changed through the clone", after.Type().Field(i).Name)
		}
	}
	if c.n != 6 || d.n != 3 {
		t.Fatalf("rows: original %d, clone %d; want 6 and 3", c.n, d.n)
	}
	for i := 0; i < d.n; i++ {
		if d.partition[i] != 1 || d.offset[i] != int64(2*i+1) {
			t.Errorf("clone row %d: partition %d offset %d; want partition 1, offset %d", i, d.partition[i], d.offset[i], 2*i+1)
		}
	}
}

// TestUnitAppendRowFillsEveryColumn: a decoded row and a dead-letter row
// each add one value to every column buffer (appendRow is generated from
// schema.RowColumns: a column without a value would leave its buffer
// short, and the insert would fail), and slices hands the driver one
// slice per landing column, in schema.LandingColumns' order and of its Go
// type (DateTime as Unix seconds).
func TestUnitAppendRowFillsEveryColumn(t *testing.T) {
	var c columns
	rec := parse.Record{EventID: "e", GRPCCode: -1, RetryAfterMS: -1, Inferred: []string{"kind"},
		FieldViolations: []parse.FieldViolation{{Field: "f", Description: "d"}}}
	c.appendRow(&rowMeta{topic: "t", offset: 1}, &rec, nil, nil)
	c.appendRow(&rowMeta{topic: "t", offset: 2}, &parse.Record{}, &parse.DecodeError{Reason: parse.ErrInvalidJSON}, []byte("x"))
	v := reflect.ValueOf(&c).Elem()
	slices := 0
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() != reflect.Slice || v.Type().Field(i).Name == "flat" {
			continue
		}
		slices++
		if f.Len() != c.n {
			t.Errorf("buffer %s holds %d values for %d rows", v.Type().Field(i).Name, f.Len(), c.n)
		}
	}
	if want := len(schema.LandingColumns) + 1; slices != want { // + eventHash
		t.Errorf("%d buffers; want one per landing column and eventHash, %d", slices, want)
	}
	if t.Failed() {
		t.FailNow()
	}
	got := c.slices(nil, 0, 2)
	if len(got) != len(schema.LandingColumns) {
		t.Fatalf("slices gives %d columns for %d landing columns", len(got), len(schema.LandingColumns))
	}
	for i, col := range schema.LandingColumns {
		rv := reflect.ValueOf(got[i])
		want := col.Go
		if want == reflect.TypeFor[time.Time]() {
			want = reflect.TypeFor[int64]()
		}
		if rv.Len() != 2 || rv.Type().Elem() != want {
			t.Errorf("column %s: %d values of %s; want 2 of %s", col.Name, rv.Len(), rv.Type().Elem(), want)
		}
	}
	if LandingColumns[0] != "dead" || len(LandingColumns) != len(schema.LandingColumns) {
		t.Errorf("LandingColumns %v", LandingColumns)
	}
	if c.dead[0] != 0 || c.dead[1] != 1 || c.dlReason[1] != "invalid_json" || c.raw[1] != "x" || c.raw[0] != "" ||
		c.inferred[0][0] != "kind" || c.violationDescriptions[0][0] != "d" || c.eventHash[0] == 0 || c.eventHash[1] != 0 {
		t.Errorf("values: dead %v dl_reason %q raw %q inferred %v descriptions %v hashes %v",
			c.dead, c.dlReason, c.raw, c.inferred, c.violationDescriptions, c.eventHash)
	}
}
