package stackload

import (
	"fmt"
	"strings"
	"testing"

	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/schema"
)

// recorder is a testing.TB that keeps the failures it is told of.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Errorf(f string, args ...any) { r.errs = append(r.errs, fmt.Sprintf(f, args...)) }

// TestUnitCompareRow: a stored row that holds what ingest makes of the
// record passes; a column the record fills that differs is reported by
// name, and only it; the provenance columns (event_id, the Kafka
// coordinates) are not compared.
func TestUnitCompareRow(t *testing.T) {
	rec := &parse.Record{GRPCCode: -1, RetryAfterMS: -1, Code: "rate_limited", Caller: "c-1",
		Retryable: parse.TriTrue, Findings: []parse.Finding{parse.FindBodyMissing}}
	row := schema.ErrorRow{Code: "rate_limited", Caller: "c-1", Retryable: 1, RetryAfterMS: -1,
		Findings: []string{"body_missing"}, EventID: "other", KafkaOffset: 9}
	r := &recorder{TB: t}
	CompareRow(r, "same", row, rec)
	if len(r.errs) > 0 {
		t.Errorf("a matching row: %q", r.errs)
	}
	row.Caller, row.Retryable = "c-2", -1
	r = &recorder{TB: t}
	CompareRow(r, "differs", row, rec)
	if len(r.errs) != 2 || !strings.Contains(r.errs[0], "column caller") || !strings.Contains(r.errs[1], "column retryable") {
		t.Errorf("caller and retryable differ: %q", r.errs)
	}
}
