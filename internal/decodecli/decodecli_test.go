package decodecli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunKeepsInputOrder: one line per input, in order, and an input that
// cannot be decoded still gets its line with the reason.
func TestRunKeepsInputOrder(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"v":1,"observed_at":1,"reply":{"http_status":"x"}}`), 0o644)
	good := filepath.Join("..", "..", "parse", "testdata", "seeds", "seed002-rest-429.http")
	grpc := filepath.Join("..", "..", "parse", "testdata", "cases", "grpc-task-not-found.grpc")
	var out, errb bytes.Buffer
	code := Run([]string{good, bad, grpc}, nil, &out, &errb)
	if code != 1 {
		t.Errorf("exit code = %d; want 1 (one input failed)", code)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines; want 3:\n%s", len(lines), out.String())
	}
	var l0, l1, l2 map[string]any
	json.Unmarshal([]byte(lines[0]), &l0)
	json.Unmarshal([]byte(lines[1]), &l1)
	json.Unmarshal([]byte(lines[2]), &l2)
	if l0["kind"] != "quota" || l0["code"] != "RATE_LIMIT_EXCEEDED" {
		t.Errorf("line 1 = %s; want the quota record", lines[0])
	}
	if l1["reason"] != "wrong_type" || l1["path"] != "event.reply.http_status" || l1["file"] != bad {
		t.Errorf("line 2 = %s; want a wrong_type failure for %s", lines[1], bad)
	}
	if l2["code"] != "TASK_NOT_FOUND" || l2["binding"] != "grpc" {
		t.Errorf("line 3 = %s; want the gRPC TASK_NOT_FOUND record", lines[2])
	}
}

func TestRunReadsStdin(t *testing.T) {
	var out, errb bytes.Buffer
	in := strings.NewReader("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
	if code := Run(nil, in, &out, &errb); code != 0 {
		t.Fatalf("exit code = %d; stderr %s", code, errb.String())
	}
	var rec map[string]any
	if err := json.Unmarshal(out.Bytes(), &rec); err != nil || rec["kind"] != "overload" {
		t.Errorf("got %s; want an overload record", out.String())
	}
}

// TestRunEventWithoutObservedAt: event JSON without observed_at (required by
// the contract) is a bad_event failure, as the pipeline dead-letters the same
// bytes although it has a Kafka timestamp to offer (parse's
// TestEventWithoutObservedAtIsBadEvent, ingest's
// TestEventWithoutObservedAtIsDeadLettered).
func TestRunEventWithoutObservedAt(t *testing.T) {
	in := filepath.Join("..", "..", "parse", "testdata", "invalid", "event-without-observed-at.json")
	var out, errb bytes.Buffer
	if code := Run([]string{in}, nil, &out, &errb); code != 1 {
		t.Errorf("exit code = %d; want 1", code)
	}
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	if line["reason"] != "bad_event" || line["path"] != "event.observed_at" || line["file"] != in {
		t.Errorf("got %s; want a bad_event failure at event.observed_at for %s", out.String(), in)
	}
}
