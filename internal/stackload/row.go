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
// what the record (decoded from the raw reply bytes, say) says, column by
// column as ingest writes a record.
func CompareRow(t testing.TB, name string, row schema.ErrorRow, rec *parse.Record) {
	t.Helper()
	retryable := int8(-1)
	switch rec.Retryable {
	case parse.TriTrue:
		retryable = 1
	case parse.TriFalse:
		retryable = 0
	}
	typed := uint8(0)
	if rec.Typed {
		typed = 1
	}
	retryAfter := rec.RetryAfterMS
	if retryAfter < 0 {
		retryAfter = -1
	}
	var fields, descs, findings []string
	for _, v := range rec.FieldViolations {
		fields = append(fields, v.Field)
		descs = append(descs, ingest.StoredText(v.Description))
	}
	for _, f := range rec.Findings {
		findings = append(findings, string(f))
	}
	want := []struct {
		col       string
		got, want any
	}{
		{"source_kind", row.SourceKind, rec.SourceKind},
		{"source_id", row.SourceID, rec.SourceID},
		{"source_version", row.SourceVersion, rec.SourceVersion},
		{"agent", row.Agent, rec.Agent},
		{"endpoint", row.Endpoint, rec.Endpoint},
		{"caller", row.Caller, rec.Caller},
		{"method", row.Method, rec.Method},
		{"attempt", int(row.Attempt), rec.Attempt},
		{"http_request_id", row.HTTPRequestID, rec.HTTPRequestID},
		{"jsonrpc_id", row.JSONRPCID, rec.JSONRPCID},
		{"message_id", row.MessageID, rec.MessageID},
		{"task_id", row.TaskID, rec.TaskID},
		{"idempotency_key_hash", row.IdempotencyKeyHash, rec.IdempotencyHash},
		{"protocol", row.Protocol, string(rec.Protocol)},
		{"binding", row.Binding, string(rec.Binding)},
		{"envelope", row.Envelope, string(rec.Envelope)},
		{"http_status", int(row.HTTPStatus), rec.HTTPStatus},
		{"grpc_status", row.GRPCStatus, rec.GRPCStatusName()},
		{"jsonrpc_code", int64(row.JSONRPCCode), int64(rec.JSONRPCCode)},
		{"code", row.Code, rec.Code},
		{"reason", row.Reason, rec.Reason},
		{"domain", row.Domain, rec.Domain},
		{"kind", row.Kind, string(rec.Kind)},
		{"typed", row.Typed, typed},
		{"retryable", row.Retryable, retryable},
		{"retryable_source", row.RetryableSource, string(rec.RetryableSource)},
		{"retry_after_ms", row.RetryAfterMS, retryAfter},
		{"retry_after_source", row.RetryAfterSource, string(rec.RetryAfterSource)},
		{"limit_name", row.LimitName, rec.Limit},
		{"scope", row.Scope, rec.Scope},
		{"error_id", row.ErrorID, rec.ErrorID},
		{"request_id", row.RequestID, rec.RequestID},
		{"message", row.Message, ingest.StoredText(rec.Message)},
		{"violation_fields", nonNil(row.ViolationFields), nonNil(fields)},
		{"violation_descriptions", nonNil(row.ViolationDescriptions), nonNil(descs)},
		{"findings", nonNil(row.Findings), nonNil(findings)},
	}
	for _, c := range want {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: column %s stored %s; decoding the raw reply gives %s", name, c.col, show(c.got), show(c.want))
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
