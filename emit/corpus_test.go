package emit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/parse"
)

// TestCorpusEventDecodesAsWire takes every HTTP reply captured from real
// SDK servers (parse/testdata/corpus/*/*.http), and checks that
//   - detection agrees with the decoder: an error for us exactly when the
//     decoder finds one (not not_an_error);
//   - the event this package builds from the reply's status, headers and
//     body (the body of a stream: its last error event) is valid under the
//     schema and decodes to the same parse.Record, field by field, as the
//     raw bytes captured on the wire with the same context.
func TestCorpusEventDecodesAsWire(t *testing.T) {
	files, _ := filepath.Glob("../parse/testdata/corpus/*/*.http")
	if len(files) < 50 {
		t.Fatalf("only %d corpus replies", len(files))
	}
	o := NewObserver(&capSink{}, Source{Kind: KindAgent, ID: "corpus-1"})
	compared := 0
	for _, f := range files {
		name := strings.TrimPrefix(f, "../parse/testdata/corpus/")
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		status, hdr, body := readRaw(t, raw)
		pubBody := body
		isErr := IsErrorStatus(status)
		switch KindOf(hdr.Get("Content-Type")) {
		case BodySSE:
			if !isErr {
				s := NewSSEScanner(64 << 10)
				s.Write(body)
				s.End()
				isErr = s.Found()
				pubBody = s.ErrorEvent()
			}
		default:
			if !isErr {
				isErr = JSONIsError(body)
			}
		}
		rec, derr := decodeMsg(raw, nil)
		if !isErr && derr == nil && rec.Envelope == parse.EnvUnrecognized {
			// A 2xx success the decoder, which expects only error replies,
			// files as unrecognized (an A2A Message): not an error here.
			continue
		}
		if isErr == isNotAnError(derr) && derr != nil || !isErr && derr == nil {
			t.Errorf("%s: detection says error=%v, decoder says %v", name, isErr, derr)
			continue
		}
		if !isErr {
			continue
		}
		ev := Event{
			ObservedAt: time.UnixMilli(1764489600123),
			Agent:      "corpus-agent",
			Endpoint:   "https://user:secret@agent.example/a2a/tasks/0b9c1c6e-1d9f-4a57-9b1c-2f0d8a4e7c11?key=abc",
			Method:     "SendMessage",
			Reply:      Reply{HTTPStatus: status, Headers: AppendHeaders(nil, hdr, ""), Body: pubBody},
		}
		o.Publish(&ev)
		b, err := ev.AppendJSON(nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		validEvent(t, b)
		sameRecord(t, name, b, raw, "https://user:secret@agent.example/a2a/tasks/0b9c1c6e-1d9f-4a57-9b1c-2f0d8a4e7c11?key=abc")
		compared++
	}
	t.Logf("%d corpus replies compared (of %d)", compared, len(files))
}
