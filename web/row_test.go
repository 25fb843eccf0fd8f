package web

import (
	"fmt"
	"testing"

	"github.com/errtrail/errtrail/internal/rowtest"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/schema"
)

// TestUnitStoryRecordShowsEveryColumn: for every column of
// schema.RowColumns a story shows (kept in errors or error_traces, with a
// JSON key), the record's definition list has an entry of that name whose
// value follows that field of lookup.Row.
func TestUnitStoryRecordShowsEveryColumn(t *testing.T) {
	for _, key := range rowtest.Keyed(func(c schema.RowColumn) bool {
		return c.Kept == schema.TableErrors || c.Kept == schema.TableErrorTraces
	}) {
		entry := func(r *lookup.Row) string {
			for _, f := range recordFields(r) {
				if f.Name == key {
					return fmt.Sprintf("%q %q %v", f.Value, f.List, f.Empty)
				}
			}
			return "missing"
		}
		if entry(&lookup.Row{}) == "missing" {
			t.Errorf("the record has no entry %s", key)
		} else if !rowtest.Reaches("json", key, entry) {
			t.Errorf("the record's entry %s does not show the field", key)
		}
	}
}
