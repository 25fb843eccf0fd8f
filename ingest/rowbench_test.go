package ingest

import (
	"testing"
	"time"

	"github.com/errtrail/errtrail/parse"
)

// BenchmarkAppendRow measures the landing row alone (columns.appendRow,
// generated from schema.RowColumns) on records of the steady mix decoded
// beforehand: the part of BenchmarkDecodeSteady that is not the decoder.
// An op is one row.
func BenchmarkAppendRow(b *testing.B) {
	evs := steadyEvents(b, 4096)
	dec := parse.NewDecoder(parse.Options{KeepRaw: -1})
	recs := make([]*parse.Record, len(evs))
	for i, e := range evs {
		var rec parse.Record
		if err := dec.DecodeMessage(e, nil, 1764489600000, &rec); err != nil {
			b.Fatalf("event %d: %v", i, err)
		}
		recs[i] = rec.Clone()
	}
	var c columns
	meta := rowMeta{topic: "errtrail.replies", ingestedAt: time.Now().Unix()}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(recs)
		if k == 0 {
			c.reset()
		}
		meta.offset = int64(i)
		c.appendRow(&meta, recs[k], nil, nil)
	}
}
