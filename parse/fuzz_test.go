package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/fnv"
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
//   - its scratch memory stays within a small multiple of the input;
//   - a credential or customer value planted anywhere in the input (one of
//     plantTokens, at a place chosen from the input's own bytes) reaches no
//     field of the record, no error text and no raw body kept for a dead
//     letter (FuzzPlantedTokenNeverInRecord, in leak_test.go, steers the
//     place and the token itself and also plants in Kafka headers);
//   - the input as a message text, repeated to 1 MiB, costs the redactor a
//     fixed multiple of its length (checkDecodeLinear, linear_test.go).
func FuzzDecodeMessage(f *testing.F) {
	for _, p := range goldenInputs(f) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"v":1,"observed_at":1,"reply":{"http_status":429,"headers":[["Retry-After","Sun, 06 Nov 1994 08:49:37 GMT"]],"body":"{\"error\":{}}"}}`))
	f.Add([]byte("GRPC\ngrpc-status: 8\ngrpc-status-details-bin: CAgSAA\n"))
	for _, p := range hostileMessages {
		f.Add([]byte(p + p))
	}
	warm, _ := os.ReadFile("testdata/seeds/seed002-rest-429.http")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkPlanted(t, data)
		checkDecodeLinear(t, data)
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

// plantTokens are what FuzzDecodeMessage plants; needle is the part that
// must never be stored (a credential without its scheme word). Every value
// is fake.
var plantTokens = []struct{ plant, needle string }{
	{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmdXp6LTcifQ.Q2hlY2tTaWduYXR1cmVGdXp6Xw", "Q2hlY2tTaWduYXR1cmVGdXp6Xw"},
	{"sk_live_Fz8pQ2mXv41LkR7sTq0WcB9d", "Fz8pQ2mXv41LkR7sTq0WcB9d"},
	{"Bearer Zk2v9QmR4tXw7LpB3nHc8sJd", "Zk2v9QmR4tXw7LpB3nHc8sJd"},
	{"fuzz.customer@mail-host.example", "fuzz.customer@mail-host.example"},
	{"4539578763621486", "4539578763621486"},
}

// checkPlanted plants one of plantTokens into data, at a place and with a
// token chosen by hashing data (so the fuzzer's inputs reach every place),
// decodes it and fails when the needle comes out.
func checkPlanted(t *testing.T, data []byte) {
	h := fnv.New64a()
	h.Write(data)
	sum := h.Sum64()
	tok := plantTokens[sum%uint64(len(plantTokens))]
	p := int((sum >> 8) % uint64(len(data)+1))
	in := make([]byte, 0, len(data)+len(tok.plant)+2)
	in = append(append(append(append(in, data[:p]...), ' '), tok.plant...), ' ')
	in = append(in, data[p:]...)
	dec := NewDecoder(Options{HashKey: []byte("fuzz-deployment-key-0123456789ab")})
	var rec Record
	err := dec.DecodeMessage(in, nil, 1764489600000, &rec)
	js, _ := rec.MarshalJSON()
	outs := [][]byte{js, dec.RawBody()}
	if err != nil {
		outs = append(outs, []byte(err.Error()))
	}
	for _, o := range outs {
		if bytes.Contains(o, []byte(tok.needle)) {
			t.Fatalf("%q planted at byte %d reached the output %q\ninput: %q", tok.plant, p, o, in)
		}
	}
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
		// A valid string unescapes to what encoding/json reads. (A null
		// unmarshals into a string too, leaving it empty: only a string
		// root is compared.)
		var want string
		var tp tape
		if reason == "" && json.Unmarshal(data, &want) == nil && tapeOK(&tp, data) && tp.root().kind == jString {
			var a arena
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

// tapeOK builds tp from data and reports whether it took all of it.
func tapeOK(tp *tape, data []byte) bool {
	reason, _ := buildTape(tp, data, 64)
	return reason == ""
}
