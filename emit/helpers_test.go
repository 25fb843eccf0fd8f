package emit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/errtrail/errtrail/parse"
)

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// validEvent fails t when b is not valid under docs/event.schema.json.
func validEvent(t testing.TB, b []byte) {
	t.Helper()
	schemaOnce.Do(func() {
		schema, schemaErr = jsonschema.NewCompiler().Compile(filepath.Join("..", "docs", "event.schema.json"))
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

// capSink is a test sink (a fake, not Kafka) that keeps each event's JSON.
type capSink struct {
	mu     sync.Mutex
	events [][]byte
	drops  map[string]int
}

func (s *capSink) Publish(ev *Event) bool {
	b, err := ev.AppendJSON(nil)
	if err != nil {
		panic(err)
	}
	s.mu.Lock()
	s.events = append(s.events, b)
	s.mu.Unlock()
	return true
}

func (s *capSink) CountDrop(reason string) {
	s.mu.Lock()
	if s.drops == nil {
		s.drops = map[string]int{}
	}
	s.drops[reason]++
	s.mu.Unlock()
}

func (s *capSink) all() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.events...)
}

// decodeMsg decodes one Kafka message as ingest does (parse.Options{}).
func decodeMsg(value []byte, hs []parse.MsgHeader) (*parse.Record, error) {
	d := parse.NewDecoder(parse.Options{})
	var rec parse.Record
	err := d.DecodeMessage(value, hs, 0, &rec)
	return rec.Clone(), err
}

// rawResponse builds an HTTP/1.1 response from a status, headers and body.
func rawResponse(status int, hs []Header, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	for _, h := range hs {
		fmt.Fprintf(&b, "%s: %s\r\n", h.Name, h.Value)
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	return b.Bytes()
}

// contextHeaders are the Kafka headers that give a raw reply the same
// context as an event (docs/event-contract.md), so the two decodes can be
// compared on every field.
func contextHeaders(t testing.TB, eventJSON []byte) []parse.MsgHeader {
	t.Helper()
	rec, err := decodeMsg(eventJSON, nil)
	if err != nil && !isNotAnError(err) {
		t.Fatalf("decode event: %v\n%s", err, eventJSON)
	}
	ev := parseEventContext(t, eventJSON)
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
			s = stringOf(id)
		}
		add("errtrail-jsonrpc-id", s)
	}
	add("errtrail-message-id", ev.Request.MessageID)
	add("errtrail-task-id", ev.Request.TaskID)
	add("errtrail-idempotency-key", ev.Request.IdempotencyKey)
	add("errtrail-binding", ev.Reply.Binding)
	return hs
}

func isNotAnError(err error) bool {
	var de *parse.DecodeError
	return errors.As(err, &de) && de.Reason == parse.ErrNotAnError
}

// sameRecord fails t unless decoding the event and decoding the raw reply
// (with the same context as Kafka headers) give the same record, field by
// field. Endpoint is given to the raw form as the producer saw it
// (uncleaned), so the comparison also checks that cleaning at the source
// stores the same endpoint.
func sameRecord(t testing.TB, name string, eventJSON, raw []byte, rawEndpoint string) *parse.Record {
	t.Helper()
	hs := contextHeaders(t, eventJSON)
	if rawEndpoint != "" {
		for i := range hs {
			if hs[i].Key == "errtrail-endpoint" {
				hs[i].Value = []byte(rawEndpoint)
			}
		}
	}
	fromEvent, err1 := decodeMsg(eventJSON, nil)
	fromRaw, err2 := decodeMsg(raw, hs)
	if (err1 == nil) != (err2 == nil) {
		t.Fatalf("%s: event decodes with %v, raw reply with %v\nevent: %s\nraw: %q", name, err1, err2, eventJSON, raw)
	}
	a, b := reflect.ValueOf(*fromEvent), reflect.ValueOf(*fromRaw)
	for i := 0; i < a.NumField(); i++ {
		f := a.Type().Field(i).Name
		x, y := a.Field(i).Interface(), b.Field(i).Interface()
		if f == "FieldViolations" || f == "Findings" {
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

// parseEventContext reads an event back into an Event (test only, via
// encoding/json on a mirror struct).
func parseEventContext(t testing.TB, b []byte) Event {
	t.Helper()
	var m struct {
		EventID    string `json:"event_id"`
		ObservedAt int64  `json:"observed_at"`
		Source     struct{ Kind, ID string }
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
	var ev Event
	ev.EventID, ev.Source.Kind, ev.Source.ID = m.EventID, m.Source.Kind, m.Source.ID
	ev.Agent, ev.Endpoint, ev.Caller, ev.Method, ev.Attempt = m.Agent, m.Endpoint, m.Caller, m.Method, m.Attempt
	ev.Request = Request{m.Request.HTTPRequestID, []byte(m.Request.JSONRPCID), m.Request.MessageID, m.Request.TaskID, m.Request.IdempotencyKey}
	ev.Reply.Binding, ev.Reply.HTTPStatus = m.Reply.Binding, m.Reply.HTTPStatus
	return ev
}

// readRaw splits a raw HTTP/1.1 reply into status, headers and body.
func readRaw(t testing.TB, raw []byte) (int, http.Header, []byte) {
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
