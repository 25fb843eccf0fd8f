package ingest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/errtrail/errtrail/loadgen"
	"github.com/errtrail/errtrail/parse"
)

// steadyEvents returns n events of the load tool's steady scenario, the
// ~1.1 KiB events ingest/measure.sh floods, as the event JSON a producer
// sends.
func steadyEvents(tb testing.TB, n int) [][]byte {
	tb.Helper()
	sc, err := loadgen.Resolve("steady")
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := loadgen.Run(context.Background(), loadgen.Config{
		Scenario: sc, Loop: true, MaxEvents: int64(n), Duration: 5 * time.Minute, Output: &buf, KeepIDs: -1,
	}); err != nil {
		tb.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimRight(buf.Bytes(), "\n"), []byte{'\n'})
	if len(lines) < n {
		tb.Fatalf("loadgen gave %d events, want %d", len(lines), n)
	}
	return lines[:n]
}

// BenchmarkDecodeSteady measures what one decode worker spends per event of
// the steady mix: DecodeMessage and the landing row (columns.appendRow),
// the part of ingest's CPU per event that needs no server. An op is one
// event; B/s is event bytes.
func BenchmarkDecodeSteady(b *testing.B) {
	evs := steadyEvents(b, 20000)
	size := 0
	for _, e := range evs {
		size += len(e)
	}
	dec := parse.NewDecoder(parse.Options{KeepRaw: -1})
	var rec parse.Record
	var c columns
	meta := rowMeta{topic: "errtrail.replies", ingestedAt: time.Now().Unix()}
	b.SetBytes(int64(size / len(evs)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(evs)
		if k%8192 == 0 {
			c.reset()
		}
		meta.offset = int64(i)
		err := dec.DecodeMessage(evs[k], nil, 1764489600000, &rec)
		if err != nil {
			b.Fatalf("event %d: %v", k, err)
		}
		c.appendRow(&meta, &rec, nil, nil)
	}
}
