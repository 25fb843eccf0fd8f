package otlpin

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/errtrail/errtrail/parse"
)

func readFixture(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", name+".otlp.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fuzzOne: whatever the bytes, Decode does not panic, fails only with a
// *parse.DecodeError and emits nothing then, and every record it emits is
// an OTLP record at an increasing index.
func fuzzOne(t *testing.T, value []byte, f Format) {
	d := NewDecoder(Config{})
	n := 0
	last := int64(-1)
	c, err := d.Decode(value, nil, f, 1, func(i uint32, rec *parse.Record, derr *parse.DecodeError) {
		n++
		if rec.Origin != parse.OriginOTLP || int64(i) <= last {
			t.Fatalf("record %d: origin %q after index %d", i, rec.Origin, last)
		}
		last = int64(i)
	})
	if err != nil {
		var de *parse.DecodeError
		if !errors.As(err, &de) || n != 0 {
			t.Fatalf("error %v (typed: %v) after %d records", err, de != nil, n)
		}
		return
	}
	if n != c.Errors {
		t.Fatalf("%d emitted, counts %+v", n, c)
	}
}

func FuzzOTLPProto(f *testing.F) {
	f.Add(spans(2, 2), false)
	for _, n := range []string{"mcp_spans", "a2a_spans"} {
		f.Add(toProto(&testing.T{}, readFixture(f, n), Traces), false)
	}
	f.Add(toProto(&testing.T{}, readFixture(f, "mcp_logs"), Logs), true)
	f.Fuzz(func(t *testing.T, value []byte, logs bool) {
		sig := Traces
		if logs {
			sig = Logs
		}
		fuzzOne(t, value, Format{sig, Proto})
	})
}

func FuzzOTLPJSON(f *testing.F) {
	// A small seed first: the engine minimizes what it finds, and a small
	// input minimizes quickly.
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7",`+
		`"attributes":[{"key":"mcp.method.name","value":{"stringValue":"tools/call"}},{"key":"error.type","value":{"stringValue":"-32602"}}]}]}]}]}`), false)
	for _, n := range []string{"mcp_spans", "a2a_spans", "mcp_logs"} {
		f.Add(readFixture(f, n), n == "mcp_logs")
	}
	f.Fuzz(func(t *testing.T, value []byte, logs bool) {
		sig := Traces
		if logs {
			sig = Logs
		}
		fuzzOne(t, value, Format{sig, JSON})
	})
}
