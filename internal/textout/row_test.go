package textout

import (
	"testing"

	"github.com/errtrail/errtrail/internal/rowtest"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/schema"
)

// TestUnitRecordShowsEveryColumn: the RECORD section prints every column of
// schema.RowColumns a story shows (kept in errors or error_traces, with a
// JSON key): changing only that field of lookup.Row changes what is
// printed. (Some share a line: retry_after_ms and retry_after_source as
// retry_after, source_kind and source_id as source, the Kafka coordinates
// as kafka.)
func TestUnitRecordShowsEveryColumn(t *testing.T) {
	text := func(r *lookup.Row) string {
		out := ""
		for _, kv := range recordFields(r) {
			out += kv[0] + "=" + kv[1] + "\n"
		}
		return out
	}
	for _, key := range rowtest.Keyed(func(c schema.RowColumn) bool {
		return c.Kept == schema.TableErrors || c.Kept == schema.TableErrorTraces
	}) {
		if !rowtest.Reaches("json", key, text) {
			t.Errorf("the record never prints %s", key)
		}
	}
}
