package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// TestUnitValidDatabase: plain identifiers pass; anything that could change
// the SQL it is formatted into (a dash, a quote, a dot, a statement) does
// not, and the error names the rule.
func TestUnitValidDatabase(t *testing.T) {
	for _, ok := range []string{"errtrail", "errtrail_e2e_1", "_x", DefaultDatabase} {
		if err := ValidDatabase(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "bad-name", "db; DROP TABLE x", "1db", "a.b", "x'", "errtrail\n"} {
		err := ValidDatabase(bad)
		if err == nil || !strings.Contains(err.Error(), "not a plain identifier") {
			t.Errorf("%q: %v; want refused as not a plain identifier", bad, err)
		}
	}
}

// TestUnitStoreError: a configuration answer of the server is a
// *ConfigError with a hint and never an *UnavailableError; a timeout or
// any other failure is an *UnavailableError only; the ids given are cut
// out of both; an error already sorted is returned as it is. No server:
// the errors are built by hand.
func TestUnitStoreError(t *testing.T) {
	const id = "dana@customer.example"
	for code, want := range map[int32]string{81: "--clickhouse.database", 60: "ingest migrate", 497: "grant SELECT"} {
		err := StoreError(fmt.Errorf("read: %w", &clickhouse.Exception{Code: code, Message: "about " + id}), id)
		var ce *ConfigError
		var ue *UnavailableError
		if !errors.As(err, &ce) || errors.As(err, &ue) {
			t.Errorf("code %d: %T %v; want *ConfigError only", code, err, err)
			continue
		}
		if !strings.Contains(ce.Hint, want) || strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "[id]") {
			t.Errorf("code %d: %q; want a hint naming %q and the id cut out", code, err, want)
		}
	}
	err := StoreError(fmt.Errorf("query about %s: %w", id, context.DeadlineExceeded), id)
	var ue *UnavailableError
	var ce *ConfigError
	if !errors.As(err, &ue) || errors.As(err, &ce) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: %T %v; want an *UnavailableError that still unwraps to DeadlineExceeded", err, err)
	}
	if strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("timeout: %q; want it said, and the id cut out", err)
	}
	if got := StoreError(ue); got != ue {
		t.Errorf("StoreError re-wrapped an *UnavailableError: %v", got)
	}
}
