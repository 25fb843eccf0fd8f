// Package emittest holds the helpers the tests of emit and of its
// publisher and interceptor packages share: the event schema check, the
// decode of an event as ingest does it, the comparison with the bytes a
// client received on the wire, and the stack's Kafka. It does not import
// emit (emit's own tests import it), and only tests import it.
package emittest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/errtrail/errtrail/parse"
)

// EventContext is an event's context as published, read back by
// ParseEventContext.
type EventContext struct {
	EventID  string
	Source   struct{ Kind, ID, Version string }
	Agent    string
	Endpoint string
	Caller   string
	Method   string
	Attempt  int
	Request  Request
	Reply    struct {
		Binding    string
		HTTPStatus int
	}
}

// Request holds an event's request ids.
type Request struct {
	HTTPRequestID  string
	JSONRPCID      []byte
	MessageID      string
	TaskID         string
	IdempotencyKey string
}

// schemaPath is docs/event.schema.json, found from this file.
func schemaPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "event.schema.json")
}

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// ValidEvent fails t when b is not valid under docs/event.schema.json.
func ValidEvent(t testing.TB, b []byte) {
	t.Helper()
	schemaOnce.Do(func() {
		schema, schemaErr = jsonschema.NewCompiler().Compile(schemaPath())
	})
	if schemaErr != nil {
		t.Fatalf("compile schema: %v", schemaErr)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("event is not JSON: %v\n%s", err, b)
	}
	if err := schema.Validate(v); err != nil {
		t.Fatalf("event not valid under the schema: %v\n%s", err, b)
	}
}

// DecodeMsg decodes one Kafka message as ingest does (parse.Options{}).
func DecodeMsg(value []byte, hs []parse.MsgHeader) (*parse.Record, error) {
	d := parse.NewDecoder(parse.Options{})
	var rec parse.Record
	err := d.DecodeMessage(value, hs, 0, &rec)
	return rec.Clone(), err
}

// ContextHeaders are the Kafka headers that give a raw reply the same
// context as an event (docs/event-contract.md), so the two decodes can be
// compared on every field.
func ContextHeaders(t testing.TB, eventJSON []byte) []parse.MsgHeader {
	t.Helper()
	rec, err := DecodeMsg(eventJSON, nil)
	if err != nil && !IsNotAnError(err) {
		t.Fatalf("decode event: %v\n%s", err, eventJSON)
	}
	ev := ParseEventContext(t, eventJSON)
	var hs []parse.MsgHeader
	add := func(k, v string) {
		if v != "" {
			hs = append(hs, parse.MsgHeader{Key: k, Value: []byte(v)})
		}
	}
	add("errtrail-v", "1")
	add("errtrail-event-id", ev.EventID)
	add("errtrail-observed-at", strconv.FormatInt(rec.ObservedAtMS, 10))
	add("errtrail-source-kind", ev.Source.Kind)
	add("errtrail-source-id", ev.Source.ID)
	add("errtrail-source-version", ev.Source.Version)
	add("errtrail-agent", ev.Agent)
	add("errtrail-endpoint", ev.Endpoint)
	add("errtrail-caller", ev.Caller)
	add("errtrail-method", ev.Method)
	if ev.Attempt > 0 {
		add("errtrail-attempt", strconv.Itoa(ev.Attempt))
	}
	add("errtrail-http-request-id", ev.Request.HTTPRequestID)
	if id := ev.Request.JSONRPCID; len(id) > 0 {
		s := string(id)
		if id[0] == '"' {
			_ = json.Unmarshal(id, &s)
		}
		add("errtrail-jsonrpc-id", s)
	}
	add("errtrail-message-id", ev.Request.MessageID)
	add("errtrail-task-id", ev.Request.TaskID)
	add("errtrail-idempotency-key", ev.Request.IdempotencyKey)
	add("errtrail-binding", ev.Reply.Binding)
	add("errtrail-trace-id", rec.TraceID)
	add("errtrail-span-id", rec.SpanID)
	return hs
}

func IsNotAnError(err error) bool {
	var de *parse.DecodeError
	return errors.As(err, &de) && de.Reason == parse.ErrNotAnError
}

// SameRecord fails t unless decoding the event and decoding the raw reply
// (with the same context as Kafka headers) give the same record, field by
// field. Endpoint is given to the raw form as the producer saw it
// (uncleaned), so the comparison also checks that cleaning at the source
// stores the same endpoint.
func SameRecord(t testing.TB, name string, eventJSON, raw []byte, rawEndpoint string) *parse.Record {
	t.Helper()
	hs := ContextHeaders(t, eventJSON)
	if rawEndpoint != "" {
		for i := range hs {
			if hs[i].Key == "errtrail-endpoint" {
				hs[i].Value = []byte(rawEndpoint)
			}
		}
	}
	fromEvent, err1 := DecodeMsg(eventJSON, nil)
	fromRaw, err2 := DecodeMsg(raw, hs)
	if (err1 == nil) != (err2 == nil) {
		t.Fatalf("%s: event decodes with %v, raw reply with %v\nevent: %s\nraw: %q", name, err1, err2, eventJSON, raw)
	}
	a, b := reflect.ValueOf(*fromEvent), reflect.ValueOf(*fromRaw)
	for i := 0; i < a.NumField(); i++ {
		f := a.Type().Field(i).Name
		x, y := a.Field(i).Interface(), b.Field(i).Interface()
		if f == "Origin" {
			continue // the form decoded: event JSON and raw reply by definition
		}
		if f == "FieldViolations" || f == "Findings" || f == "Inferred" {
			if a.Field(i).Len() == 0 && b.Field(i).Len() == 0 {
				continue
			}
		}
		if !reflect.DeepEqual(x, y) {
			t.Errorf("%s: %s: from the event %#v; from the wire %#v", name, f, x, y)
		}
	}
	return fromRaw
}

// ParseEventContext reads an event's context back (via encoding/json on a
// mirror struct).
func ParseEventContext(t testing.TB, b []byte) EventContext {
	t.Helper()
	var m struct {
		EventID    string `json:"event_id"`
		ObservedAt int64  `json:"observed_at"`
		Source     struct{ Kind, ID, Version string }
		Agent      string
		Endpoint   string
		Caller     string
		Method     string
		Attempt    int
		Request    struct {
			HTTPRequestID  string          `json:"http_request_id"`
			JSONRPCID      json.RawMessage `json:"jsonrpc_id"`
			MessageID      string          `json:"message_id"`
			TaskID         string          `json:"task_id"`
			IdempotencyKey string          `json:"idempotency_key"`
		}
		Reply struct {
			Binding    string
			HTTPStatus int `json:"http_status"`
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("event: %v", err)
	}
	var ev EventContext
	ev.EventID, ev.Source.Kind, ev.Source.ID, ev.Source.Version = m.EventID, m.Source.Kind, m.Source.ID, m.Source.Version
	ev.Agent, ev.Endpoint, ev.Caller, ev.Method, ev.Attempt = m.Agent, m.Endpoint, m.Caller, m.Method, m.Attempt
	ev.Request = Request{m.Request.HTTPRequestID, []byte(m.Request.JSONRPCID), m.Request.MessageID, m.Request.TaskID, m.Request.IdempotencyKey}
	ev.Reply.Binding, ev.Reply.HTTPStatus = m.Reply.Binding, m.Reply.HTTPStatus
	return ev
}

// ReadRaw splits a raw HTTP/1.1 reply into status, headers and body.
func ReadRaw(t testing.TB, raw []byte) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("read raw reply: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read raw body: %v", err)
	}
	return resp.StatusCode, resp.Header, body
}
