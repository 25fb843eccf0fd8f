package otlpin

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/errtrail/errtrail/parse"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// render decodes value and prints the counts and every emitted record, one
// JSON line each, the form of the golden files.
func render(t *testing.T, value []byte, f Format) string {
	t.Helper()
	d := NewDecoder(Config{})
	var out bytes.Buffer
	c, err := d.Decode(value, nil, f, 1764925000000, func(idx uint32, rec *parse.Record, derr *parse.DecodeError) {
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		dead := ""
		if derr != nil {
			dead = " dead=" + string(derr.Reason)
		}
		// Fields the record's JSON leaves out.
		extra := ""
		if rec.JSONRPCID != "" {
			extra += " jsonrpc_id=" + rec.JSONRPCID
		}
		if rec.SourceID != "" {
			extra += " source_id=" + rec.SourceID
		}
		if rec.IdempotencyHash != 0 {
			extra += fmt.Sprintf(" idempotency_hash=%x", rec.IdempotencyHash)
		}
		fmt.Fprintf(&out, "index=%d%s%s %s\n", idx, dead, extra, b)
	})
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return fmt.Sprintf("errors=%d ok=%d other=%d\n", c.Errors, c.OK, c.Other) + out.String()
}

// toProto converts an OTLP/JSON fixture to the otlp_proto bytes of the
// same message.
func toProto(t *testing.T, js []byte, sig Signal) []byte {
	t.Helper()
	var m proto.Message = &tracepb.TracesData{}
	if sig == Logs {
		m = &logspb.LogsData{}
	}
	if err := unmarshalJSON(js, m); err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeGolden: each fixture (OTLP/JSON as the Kafka exporter writes
// it) decodes to its golden records, and the same message in otlp_proto
// decodes to exactly the same records.
func TestDecodeGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.otlp.json")
	if len(files) < 3 {
		t.Fatalf("fixtures missing: %v", files)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			js, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sig := Traces
			if strings.Contains(path, "logs") {
				sig = Logs
			}
			got := render(t, js, Format{sig, JSON})
			if pb := render(t, toProto(t, js, sig), Format{sig, Proto}); pb != got {
				t.Errorf("otlp_proto and otlp_json of one message differ:\nproto:\n%s\njson:\n%s", pb, got)
			}
			golden := strings.TrimSuffix(path, ".otlp.json") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./otlpin -run TestDecodeGolden -update)", err)
			}
			if got != string(want) {
				t.Errorf("records differ from %s:\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}
