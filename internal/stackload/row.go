package stackload

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/schema"
)

// StoredCase is an event read back from Kafka and the record decoded from
// the raw reply bytes the client received at the same moment.
type StoredCase struct {
	Name, EventID string
	Wire          *parse.Record
}

// CheckStored ingests a topic's n events with ingest.Pipeline into a fresh
// database of the stack's ClickHouse (Topic) and compares each case's
// stored row, column by column, with its wire record: nothing
// dead-lettered, nothing lost, nothing stored twice.
func CheckStored(t testing.TB, topic string, n int, cases []StoredCase) {
	t.Helper()
	st := Topic(t, topic, int64(n))
	var rows, dead uint64
	if err := st.Conn.QueryRow(context.Background(), "SELECT (SELECT count() FROM "+st.Database+"."+schema.TableErrors+" FINAL), (SELECT count() FROM "+
		st.Database+"."+schema.TableDeadLetter+")").Scan(&rows, &dead); err != nil {
		t.Fatal(err)
	}
	if rows != uint64(n) || dead != 0 {
		t.Errorf("stored %d rows and %d dead letters for %d events", rows, dead, n)
	}
	if len(cases) != n {
		t.Errorf("%d cases to compare for %d events", len(cases), n)
	}
	for _, c := range cases {
		CompareRow(t, c.Name, StoredRow(t, st, c.EventID), c.Wire)
	}
}

// StoredRow reads the one errors row of an event back from d's database
// (schema.Lookup, duplicates removed), failing t when there is none or
// more than one.
func StoredRow(t testing.TB, d *Data, eventID string) schema.ErrorRow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rows, err := schema.Lookup(ctx, d.Conn, schema.Options{Database: d.Database}, eventID)
	if err != nil {
		t.Fatalf("lookup %s: %v", eventID, err)
	}
	if len(rows) != 1 {
		t.Fatalf("event %s: %d rows stored, want 1", eventID, len(rows))
	}
	return rows[0]
}

// CompareRow fails t for every column of the stored row that differs from
// what the record (decoded from the raw reply bytes, say) says: every
// column of errors the record fills (schema.RowColumns, FromRecord), each
// with the value ingest's own row builder makes of rec. The provenance
// columns (event_id, observed_at, the Kafka coordinates) are not compared.
func CompareRow(t testing.TB, name string, row schema.ErrorRow, rec *parse.Record) {
	t.Helper()
	var b ingest.RowBuilder
	b.Append(ingest.RowSource{}, rec, nil, nil)
	built := b.Columns(nil, 0, 1)
	stored := reflect.ValueOf(row)
	for i, c := range schema.RowColumns {
		if c.Kept != schema.TableErrors || c.From != schema.FromRecord {
			continue
		}
		f, ok := stored.Type().FieldByNameFunc(func(n string) bool {
			sf, _ := stored.Type().FieldByName(n)
			return sf.Tag.Get("ch") == c.Name
		})
		if !ok {
			t.Errorf("%s: schema.ErrorRow has no column %s", name, c.Name)
			continue
		}
		got, want := stored.FieldByIndex(f.Index).Interface(), reflect.ValueOf(built[i]).Index(0).Interface()
		if s, ok := got.([]string); ok {
			got, want = nonNil(s), nonNil(want.([]string))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: column %s stored %s; decoding the raw reply gives %s", name, c.Name, show(got), show(want))
		}
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func show(v any) string { return fmt.Sprintf("%#v", v) }
