package lookup

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/errtrail/errtrail/internal/rowtest"
	"github.com/errtrail/errtrail/schema"
)

// shown is the columns a story's record shows: those kept past landing
// that have a JSON key.
func shown(c schema.RowColumn) bool {
	return c.Kept == schema.TableErrors || c.Kept == schema.TableErrorTraces
}

// TestUnitRowHasEveryColumn: Row's JSON keys are the keys schema.RowColumns
// declares for the columns errors and error_traces keep, no more and no
// fewer (the API's record, docs/openapi.yaml).
func TestUnitRowHasEveryColumn(t *testing.T) {
	got := rowtest.Keys(&Row{}, "json")
	want := rowtest.Keyed(shown)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Row's JSON keys\n %v\nschema.RowColumns'\n %v", got, want)
	}
}

// TestUnitRecordOfCoversEveryColumn: every column of errors with a JSON key
// reaches the story's record (recordOf), and every column of error_traces
// with one reaches it through withTrace: changing only that column changes
// the record's value at that key.
func TestUnitRecordOfCoversEveryColumn(t *testing.T) {
	for _, c := range schema.RowColumns {
		if c.JSON == "" || !shown(c) {
			continue
		}
		var reaches bool
		switch c.Kept {
		case schema.TableErrors:
			reaches = rowtest.Reaches("ch", c.Name, func(r *schema.ErrorRow) string {
				rec := recordOf(r)
				return keyOf(t, &rec, c.JSON)
			})
		case schema.TableErrorTraces:
			reaches = rowtest.Reaches("ch", c.Name, func(tr *schema.TraceRow) string {
				var rec Row
				withTrace(&rec, tr)
				return keyOf(t, &rec, c.JSON)
			})
		}
		if !reaches {
			t.Errorf("column %s (%s) does not reach the record's %q", c.Name, c.Kept, c.JSON)
		}
	}
}

// keyOf is the JSON of r's value at key.
func keyOf(t *testing.T, r *Row, key string) string {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return string(m[key])
}

// TestUnitObserversCompareTheReply: the observers of one reply are compared
// on exactly the fields schema.RowColumns marks as the reply's (Reply), and
// each comparison reads its own field.
func TestUnitObserversCompareTheReply(t *testing.T) {
	var got []string
	for _, c := range compared {
		got = append(got, c.name)
		if !rowtest.Reaches("json", c.name, func(r *Row) string { return c.get(r) }) {
			t.Errorf("the comparison of %s does not read it", c.name)
		}
	}
	want := rowtest.Keyed(func(c schema.RowColumn) bool { return c.Reply })
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("observers compare\n %v\nthe reply's columns are\n %v", got, want)
	}
}
