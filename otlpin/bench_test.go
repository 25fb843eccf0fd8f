package otlpin

import (
	"testing"

	"github.com/errtrail/errtrail/parse"
)

// BenchmarkDecode: one otlp_proto and one otlp_json message of the
// mcp_spans fixture (7 spans: 5 records, 1 ok, 1 other) per op.
func BenchmarkDecode(b *testing.B) {
	js := readFixture(b, "mcp_spans")
	pb := toProto(&testing.T{}, js, Traces)
	for _, c := range []struct {
		name  string
		value []byte
		enc   Encoding
	}{{"proto", pb, Proto}, {"json", js, JSON}} {
		b.Run(c.name, func(b *testing.B) {
			d := NewDecoder(Config{})
			n := 0
			emit := func(uint32, *parse.Record, *parse.DecodeError) { n++ }
			b.SetBytes(int64(len(c.value)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Decode(c.value, nil, Format{Traces, c.enc}, 1, emit); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/float64(b.N), "records/op")
		})
	}
}
