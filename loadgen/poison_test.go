package loadgen

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func jsonDepth(b []byte) int {
	depth, max, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '{' || c == '['):
			depth++
			if depth > max {
				max = depth
			}
		case !inStr && (c == '}' || c == ']'):
			depth--
		}
	}
	return max
}

// TestPoisonKinds checks that each poison kind is what it says and nothing
// else: the too_large one is valid JSON (only its size is wrong), the deep
// one is valid and small, and so on.
func TestPoisonKinds(t *testing.T) {
	const tooLarge = 1<<20 + 4<<10
	for _, kind := range PoisonKinds {
		b := poisonValue(kind, "lg-test:p1", 1764489600123, "research-agent", "orchestrator-7", tooLarge)
		valid := json.Valid(b)
		var typed struct {
			V          int   `json:"v"`
			ObservedAt int64 `json:"observed_at"`
		}
		typedErr := json.Unmarshal(b, &typed)
		switch kind {
		case PoisonMalformedJSON:
			if valid || !bytes.HasPrefix(b, []byte("{")) || !utf8.Valid(b) {
				t.Errorf("%s: valid=%v", kind, valid)
			}
		case PoisonTooLarge:
			if !valid || len(b) <= 1<<20 || len(b) > tooLarge+64 || typedErr != nil {
				t.Errorf("%s: valid=%v len=%d err=%v", kind, valid, len(b), typedErr)
			}
		case PoisonTooDeep:
			if !valid || jsonDepth(b) <= 64 || len(b) > 4096 || typedErr != nil {
				t.Errorf("%s: valid=%v depth=%d len=%d", kind, valid, jsonDepth(b), len(b))
			}
		case PoisonInvalidUTF8:
			if utf8.Valid(b) || jsonDepth(b) > 3 || !bytes.HasPrefix(b, []byte("{")) {
				t.Errorf("%s: utf8 valid=%v", kind, utf8.Valid(b))
			}
		case PoisonWrongTypes:
			if !valid || typedErr == nil {
				t.Errorf("%s: valid=%v, typed decode error %v; want valid JSON that fails typed decoding", kind, valid, typedErr)
			}
		case PoisonEmpty:
			if len(b) != 0 {
				t.Errorf("%s: %d bytes", kind, len(b))
			}
		case PoisonNotJSON:
			if valid || len(b) == 0 || b[0] == '{' || b[0] == '[' || bytes.HasPrefix(b, []byte("HTTP/1.")) || bytes.HasPrefix(b, []byte("GRPC")) {
				t.Errorf("%s: %q", kind, b)
			}
		default:
			t.Errorf("untested poison kind %s", kind)
		}
	}
}

// TestPoisonScenario: poison.yaml mixes exactly 1,000 poison messages, each
// kind in turn, into its valid events.
func TestPoisonScenario(t *testing.T) {
	sc, err := Builtin("poison")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := runToBuffer(t, sc, Config{KeepIDs: -1})
	if r.Poison != 1000 || r.Valid < 5000 {
		t.Fatalf("poison %d, valid %d; want 1000 and thousands", r.Poison, r.Valid)
	}
	for _, k := range PoisonKinds {
		if n := r.PoisonByKind[k]; n < 1000/int64(len(PoisonKinds)) {
			t.Errorf("%s: %d", k, n)
		}
	}
}
