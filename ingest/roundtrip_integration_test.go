package ingest_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/parse"
)

// TestStoredRowsMatchTheDecoder sends every reply of the real-SDK corpus
// (parse/testdata/corpus) through Kafka and the ingester, in inserts of many
// small blocks, and compares each stored errors row, column by column, with
// what the decoder makes of the same bytes offline. It covers the columns no
// other test reads back: the violation and findings arrays, retry fields,
// ids and statuses.
func TestStoredRowsMatchTheDecoder(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "parse", "testdata", "corpus", "*", "*.http"))
	if err != nil {
		t.Fatal(err)
	}
	grpc, _ := filepath.Glob(filepath.Join("..", "parse", "testdata", "corpus", "*", "*.grpc"))
	files = append(files, grpc...)
	if len(files) < 50 {
		t.Fatalf("found %d corpus replies; want the whole corpus", len(files))
	}
	s := newStack(t, 1) // one partition: message i has offset i
	var msgs []kafka.Message
	for _, f := range files {
		v, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, kafka.Message{Key: []byte(f), Value: v})
	}
	s.produce(t, msgs)

	cfg := s.config(testLogger(t), ingest.NewMetrics(nil))
	cfg.InsertBlockRows = 7 // many blocks per insert, and blocks that end mid-worker
	run := s.start(t, cfg)
	s.waitFor(t, 2*time.Minute, "every reply stored", func(c counts) bool { return c.errors+c.dead >= uint64(len(msgs)) })
	if err := run.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}

	type row struct {
		Protocol, Binding, Envelope              string
		HTTPStatus                               uint16
		GRPCStatus                               string
		JSONRPCCode                              int32
		Code, Reason, Domain, Kind               string
		Typed                                    uint8
		Retryable                                int8
		RetryableSource                          string
		RetryAfterMS                             int64
		RetryAfterSource, Limit, Scope           string
		ErrorID, RequestID, Message              string
		TaskID, MessageID, JSONRPCID             string
		ViolationFields, ViolationDescs, Finding []string
	}
	got := map[int64]row{}
	rows, err := s.conn.Query(context.Background(), `SELECT kafka_offset, protocol, binding, envelope, http_status,
		grpc_status, jsonrpc_code, code, reason, domain, kind, typed, retryable, retryable_source, retry_after_ms,
		retry_after_source, limit_name, scope, error_id, request_id, message, task_id, message_id, jsonrpc_id,
		violation_fields, violation_descriptions, findings FROM `+s.sopt.Database+`.errors`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var off int64
		var r row
		if err := rows.Scan(&off, &r.Protocol, &r.Binding, &r.Envelope, &r.HTTPStatus, &r.GRPCStatus, &r.JSONRPCCode,
			&r.Code, &r.Reason, &r.Domain, &r.Kind, &r.Typed, &r.Retryable, &r.RetryableSource, &r.RetryAfterMS,
			&r.RetryAfterSource, &r.Limit, &r.Scope, &r.ErrorID, &r.RequestID, &r.Message, &r.TaskID, &r.MessageID,
			&r.JSONRPCID, &r.ViolationFields, &r.ViolationDescs, &r.Finding); err != nil {
			t.Fatal(err)
		}
		if _, dup := got[off]; dup {
			t.Errorf("offset %d stored twice", off)
		}
		got[off] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()

	dec := parse.NewDecoder(cfg.Decoder)
	var rec parse.Record
	decoded, arrays := 0, 0
	for i, m := range msgs {
		if err := dec.DecodeMessage(m.Value, nil, time.Now().UnixMilli(), &rec); err != nil {
			if _, ok := got[int64(i)]; ok {
				t.Errorf("%s: stored in errors, but the decoder refuses it: %v", m.Key, err)
			}
			continue
		}
		decoded++
		want := row{
			Protocol: string(rec.Protocol), Binding: string(rec.Binding), Envelope: string(rec.Envelope),
			HTTPStatus: uint16(rec.HTTPStatus), GRPCStatus: rec.GRPCStatusName(), JSONRPCCode: int32(rec.JSONRPCCode),
			Code: rec.Code, Reason: rec.Reason, Domain: rec.Domain, Kind: string(rec.Kind),
			RetryableSource: string(rec.RetryableSource), RetryAfterMS: max(rec.RetryAfterMS, -1),
			RetryAfterSource: string(rec.RetryAfterSource), Limit: rec.Limit, Scope: rec.Scope,
			ErrorID: rec.ErrorID, RequestID: rec.RequestID, Message: rec.Message,
			TaskID: rec.TaskID, MessageID: rec.MessageID, JSONRPCID: rec.JSONRPCID,
			ViolationFields: []string{}, ViolationDescs: []string{}, Finding: []string{},
		}
		if rec.Typed {
			want.Typed = 1
		}
		switch rec.Retryable {
		case parse.TriTrue:
			want.Retryable = 1
		case parse.TriFalse:
			want.Retryable = 0
		default:
			want.Retryable = -1
		}
		for _, v := range rec.FieldViolations {
			want.ViolationFields = append(want.ViolationFields, v.Field)
			want.ViolationDescs = append(want.ViolationDescs, v.Description)
		}
		for _, f := range rec.Findings {
			want.Finding = append(want.Finding, string(f))
		}
		if len(want.ViolationFields)+len(want.Finding) > 0 {
			arrays++
		}
		g, ok := got[int64(i)]
		if !ok {
			t.Errorf("%s (offset %d): decodes, but no errors row", m.Key, i)
			continue
		}
		if !reflect.DeepEqual(g, want) {
			t.Errorf("%s (offset %d):\n stored  %+v\n decoded %+v", m.Key, i, g, want)
		}
	}
	if decoded < len(msgs)*9/10 || arrays == 0 {
		t.Fatalf("%d of %d replies decode, %d with violations or findings; the corpus should exercise both", decoded, len(msgs), arrays)
	}
	t.Logf("%d replies compared, %d with violations or findings", decoded, arrays)
}
