package parse

import (
	"slices"
	"testing"

	"github.com/errtrail/errtrail/internal/rowtest"
	"github.com/errtrail/errtrail/schema"
)

// TestUnitRecordJSONKeysAreTheRows: the keys of `ingest decode`'s JSON
// (recordJSON) are the JSON keys schema.RowColumns marks Decoded, no more
// and no fewer: a column added to the row is printed, or explicitly not.
func TestUnitRecordJSONKeysAreTheRows(t *testing.T) {
	got := rowtest.Keys(&recordJSON{}, "json")
	want := rowtest.Keyed(func(c schema.RowColumn) bool { return c.Decoded })
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("recordJSON's keys\n %v\nthe row's decoded keys\n %v", got, want)
	}
}
