package emit

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/parse"
)

// TestEventBodyForm: a body goes as body_json only when the decoder reads
// it as JSON (valid, UTF-8 strings, not nested past the event's limit); as
// body when it is other UTF-8 text; as body_base64 otherwise. Each form
// validates against the schema and decodes to the same record as the raw
// reply.
func TestEventBodyForm(t *testing.T) {
	deep := strings.Repeat(`{"a":`, maxBodyJSONDepth+1) + `1` + strings.Repeat(`}`, maxBodyJSONDepth+1)
	okDeep := strings.Repeat(`{"a":`, maxBodyJSONDepth-2) + `{"error":{"code":-32603,"message":"x"}}` + strings.Repeat(`}`, maxBodyJSONDepth-2)
	for _, c := range []struct {
		name, body, form string
		reason           parse.ErrReason // the dead-letter reason of both decodes, "" when they give a record
	}{
		{"JSON object", `{"error":{"code":-32601,"message":"Method not found"}}`, `"body_json":`, ""},
		{"JSON array", `[{"error":{"code":-32601,"message":"Method not found"}}]`, `"body_json":`, ""},
		{"nested to the limit", okDeep, `"body_json":`, ""},
		{"nested past the limit", deep, `"body":`, ""},
		{"broken JSON", `{"error":{"code":-32601,}`, `"body":`, parse.ErrInvalidJSON},
		{"JSON with a raw control byte in a string", "{\"error\":\"a\x01b\"}", `"body":`, parse.ErrInvalidJSON},
		{"invalid UTF-8 inside a JSON string", "{\"error\":\"caf\xe9\"}", `"body_base64":`, parse.ErrInvalidUTF8},
		{"plain text", "upstream connect error", `"body":`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := Event{EventID: "e-1", ObservedAt: time.UnixMilli(1764489600000), Agent: "a",
				Reply: Reply{HTTPStatus: 500, Headers: []Header{{"Content-Type", "application/json"}}, Body: []byte(c.body)}}
			b, err := ev.AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, []byte(c.form)) {
				t.Fatalf("want the body as %s, got %s", c.form, b)
			}
			for _, other := range []string{`"body_json":`, `"body":`, `"body_base64":`} {
				if other != c.form && bytes.Contains(b, []byte(other)) {
					t.Fatalf("the body is also written as %s: %s", other, b)
				}
			}
			validEvent(t, b)
			raw := rawResponse(500, ev.Reply.Headers, ev.Reply.Body)
			if c.reason == "" {
				sameRecord(t, c.name, b, raw, "")
				return
			}
			// A body the decoder refuses is refused alike from the event
			// and from the wire: one dead letter, for the same reason.
			_, errEvent := decodeMsg(b, nil)
			_, errRaw := decodeMsg(raw, nil)
			for _, err := range []error{errEvent, errRaw} {
				var de *parse.DecodeError
				if !errors.As(err, &de) || de.Reason != c.reason {
					t.Errorf("decode: %v, want a %s dead letter (event: %v; wire: %v)", err, c.reason, errEvent, errRaw)
				}
			}
		})
	}
}

// TestEventSourceVersion: Source.Version goes out as source.version, is
// valid under the contract's schema and reaches the decoded record; an
// event without it has no version member.
func TestEventSourceVersion(t *testing.T) {
	ev := Event{EventID: "e-v", ObservedAt: time.UnixMilli(1764489600000), Agent: "a",
		Source: Source{Kind: KindAgent, ID: "i-1", Version: "1.5.0-rc.2"},
		Reply:  Reply{HTTPStatus: 503, Headers: []Header{{"Content-Type", "application/json"}}, Body: []byte(`{"error":{"code":503,"status":"UNAVAILABLE","message":"busy"}}`)}}
	b, err := ev.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"source":{"kind":"agent","id":"i-1","version":"1.5.0-rc.2"}`)) {
		t.Fatalf("event %s; want source.version", b)
	}
	validEvent(t, b)
	rec, err := decodeMsg(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rec.SourceVersion != "1.5.0-rc.2" {
		t.Errorf("decoded source_version %q", rec.SourceVersion)
	}
	ev.Source.Version = ""
	if b, _ = ev.AppendJSON(nil); bytes.Contains(b, []byte(`"version"`)) {
		t.Errorf("an event without a version has one: %s", b)
	}
}
