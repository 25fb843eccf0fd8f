package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/errtrail/errtrail/parse"
)

// TestPadBytes checks --pad-bytes: every valid event carries an "x_pad" of
// exactly the asked size, stays valid JSON, and decodes to the same record
// as the event without it, so padded runs measure large messages without
// changing what is stored.
func TestPadBytes(t *testing.T) {
	sc, err := Builtin("steady")
	if err != nil {
		t.Fatal(err)
	}
	const pad = 5000
	var buf bytes.Buffer
	if _, err := Run(context.Background(), Config{Scenario: sc, Loop: true, MaxEvents: 300, Output: &buf, KeepIDs: -1, PadBytes: pad}); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != 300 {
		t.Fatalf("%d events, want 300", len(lines))
	}
	d := parse.NewDecoder(parse.Options{})
	for i, l := range lines {
		var ev struct {
			Pad *string `json:"x_pad"`
		}
		if err := json.Unmarshal(l, &ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.Pad == nil || len(*ev.Pad) != pad {
			t.Fatalf("event %d: x_pad missing or not %d bytes", i, pad)
		}
		// The same event without the field: cut `,"x_pad":"…"` before the
		// closing brace.
		plain := append(bytes.Clone(l[:len(l)-len(`,"x_pad":""}`)-pad]), '}')
		if !json.Valid(plain) {
			t.Fatalf("event %d without x_pad is not JSON: %.200s", i, plain)
		}
		var a, b parse.Record
		if err := d.DecodeMessage(l, nil, 0, &a); err != nil {
			t.Fatalf("event %d padded: %v", i, err)
		}
		ja, _ := a.MarshalJSON()
		ja = bytes.Clone(ja)
		if err := d.DecodeMessage(plain, nil, 0, &b); err != nil {
			t.Fatalf("event %d plain: %v", i, err)
		}
		jb, _ := b.MarshalJSON()
		if !bytes.Equal(ja, jb) {
			t.Fatalf("event %d decodes differently with x_pad:\n%s\n%s", i, ja, jb)
		}
	}
}
