package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"
	"unicode/utf8"
)

var validKinds = []Kind{KindQuota, KindOverload, KindInvalid, KindAuth, KindNotFound, KindConflict, KindUnsupported, KindInternal, KindUnknown}

// FuzzDecodeMessage states the decoder's invariants for any input:
//   - it never panics;
//   - it fails only with a *DecodeError whose reason is one of Reasons;
//   - a decoded record has a known kind and protocol, and renders as JSON;
//   - a Decoder that decoded something else before gives the same record as
//     a fresh one (scratch memory is reset, borrowed strings do not leak);
//   - its scratch memory stays within a small multiple of the input.
func FuzzDecodeMessage(f *testing.F) {
	for _, p := range goldenInputs(f) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"v":1,"observed_at":1,"reply":{"http_status":429,"headers":[["Retry-After","Sun, 06 Nov 1994 08:49:37 GMT"]],"body":"{\"error\":{}}"}}`))
	f.Add([]byte("GRPC\ngrpc-status: 8\ngrpc-status-details-bin: CAgSAA\n"))
	warm, _ := os.ReadFile("testdata/seeds/seed002-rest-429.http")
	f.Fuzz(func(t *testing.T, data []byte) {
		fresh := NewDecoder(Options{})
		var rec Record
		err := fresh.DecodeMessage(data, nil, 1764489600000, &rec)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || !slices.Contains(Reasons, de.Reason) {
				t.Fatalf("error %v is not a DecodeError with a known reason", err)
			}
			return
		}
		if !slices.Contains(validKinds, rec.Kind) {
			t.Fatalf("kind %q is not a known kind", rec.Kind)
		}
		switch rec.Protocol {
		case ProtocolA2A, ProtocolAAP, ProtocolMCP, ProtocolAgentRelay, ProtocolUnknown:
		default:
			t.Fatalf("protocol %q is not a known protocol", rec.Protocol)
		}
		if rec.RetryAfterMS < -1 {
			t.Fatalf("retry_after_ms = %d", rec.RetryAfterMS)
		}
		js, err := rec.MarshalJSON()
		if err != nil || !json.Valid(js) {
			t.Fatalf("record does not render as JSON: %v", err)
		}
		if limit := 8*len(data) + 64<<10; cap(fresh.sc.ar.buf) > limit {
			t.Fatalf("arena grew to %d bytes for a %d-byte input", cap(fresh.sc.ar.buf), len(data))
		}
		used := NewDecoder(Options{})
		var other Record
		used.DecodeMessage(warm, nil, 1, &other)
		var again Record
		if err := used.DecodeMessage(data, nil, 1764489600000, &again); err != nil {
			t.Fatalf("second decode failed: %v", err)
		}
		js2, _ := again.MarshalJSON()
		if !bytes.Equal(js, js2) {
			t.Fatalf("a reused Decoder gives a different record:\n%s\n%s", js, js2)
		}
	})
}

// FuzzValidateJSON checks the JSON scanner against encoding/json: on UTF-8
// input within the depth limit, both accept exactly the same documents;
// ValidJSON, on a tape reused from its pool, agrees with a fresh tape.
func FuzzValidateJSON(f *testing.F) {
	for _, s := range []string{`{"a":"b\"c","d":[1,2.5e3,-0,true,false,null]}`, `"\u00e9\ud83d\ude00"`, `{"k":"12345678\"9"}`, `[`, `{"a":1,}`, `"\x01"`} {
		f.Add([]byte(s))
	}
	for _, p := range goldenInputs(f) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reason, _ := validateJSON(data, 64)
		if got := ValidJSON(data, 64); got != (reason == "") {
			t.Fatalf("ValidJSON = %v with a pooled tape, validateJSON says %q, for %q", got, reason, data)
		}
		if reason == ErrTooDeep || !utf8.Valid(data) {
			return
		}
		if got, want := reason == "", json.Valid(data); got != want {
			t.Fatalf("validateJSON accepts=%v (%s), encoding/json accepts=%v for %q", got, reason, want, data)
		}
		// A valid string unescapes to what encoding/json reads.
		var want string
		if reason == "" && json.Unmarshal(data, &want) == nil {
			var a arena
			var tp tape
			buildTape(&tp, data, 64)
			if got := a.str(tp.root()); got != want {
				t.Fatalf("unescape(%q) = %q; encoding/json gives %q", data, got, want)
			}
			// The same for escaped member names.
			if got := string(appendUnescaped(nil, tp.root().inner())); got != want {
				t.Fatalf("appendUnescaped(%q) = %q; encoding/json gives %q", data, got, want)
			}
		}
	})
}
