package rowgen

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreCurrent: the files generated from
// schema.RowColumns are what the generator writes today, so a column
// declared without `go generate ./schema` fails here.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Errorf("%d generated files; want schema/errorrow_gen.go and ingest/columns_gen.go", len(files))
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what schema.RowColumns generates: run go generate ./schema", path)
		}
	}
}

func TestGoNames(t *testing.T) {
	for col, want := range map[string][2]string{
		"http_request_id":      {"HTTPRequestID", "httpRequestID"},
		"observed_at_ms":       {"ObservedAtMS", "observedAtMS"},
		"jsonrpc_code":         {"JSONRPCCode", "jsonrpcCode"},
		"kafka_topic":          {"KafkaTopic", "topic"},
		"dead":                 {"Dead", "dead"},
		"idempotency_key_hash": {"IdempotencyKeyHash", "idempotencyKeyHash"},
	} {
		if g, b := GoName(col), BufferName(col); g != want[0] || b != want[1] {
			t.Errorf("%s: GoName %q, BufferName %q; want %q, %q", col, g, b, want[0], want[1])
		}
	}
}
