package parse

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// The decoder's time on hostile text (issue 23 §0). Every text pass of a
// decode goes through the Decoder's Redactor, whose Work counts the bytes
// its detectors examined (redact/runs.go): a deterministic measure, so the
// tests bound it without timing anything. Framing, JSON validation and
// headers are single passes over the input and are measured by
// BenchmarkDecodeHostile, not counted here.

// decodeWorkFactor bounds the redactor's work per byte of a message: the
// text pass over the message and, with the raw body kept, over the body
// (redact's own bound is 64 per pass).
const decodeWorkFactor = 160

// hostileMessages are texts that once took the square of their length or
// worse (a 64 KiB one took seconds): the and one per detector.
var hostileMessages = []string{
	"1-", "%40", "a.b.", "eyJ.", "https://u:p@", // the issue's
	"+1", "A1a-", "sha256-", "eyJxxxxxxxxxxxx-", "a%40", "http://a:b/", "-e", "a=",
}

// plainMessage is ordinary prose of the same sizes, for comparison.
const plainMessage = "Caller client-19 exceeded the limit of the agent "

// hostileReply is a JSON-RPC error reply, raw HTTP, whose error.message is
// p repeated whole to about n bytes.
func hostileReply(p string, n int) []byte {
	msg, _ := json.Marshal(strings.Repeat(p, n/len(p)))
	body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":` + string(msg) + `}}`
	return []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
}

// hostileGRPC is a gRPC reply text form whose grpc-message is p repeated,
// percent-encoded.
func hostileGRPC(p string, n int) []byte {
	return []byte("GRPC\ngrpc-status: 8\ngrpc-message: " + url.PathEscape(strings.Repeat(p, n/len(p))) + "\n")
}

// hostileViolation is a BadRequest whose one field violation has p
// repeated as its description and as its field path.
func hostileViolation(p string, n int) []byte {
	v, _ := json.Marshal(strings.Repeat(p, n/len(p)/2))
	body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":` +
		string(v) + `,"description":` + string(v) + `}]}]}}`
	return []byte(fmt.Sprintf("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
}

// decodeWork decodes in with a fresh Decoder and returns its redactor's
// work.
func decodeWork(t testing.TB, in []byte) int {
	d := NewDecoder(Options{MaxBytes: 4 << 20})
	var rec Record
	if err := d.DecodeMessage(in, nil, 1764489600000, &rec); err != nil {
		t.Fatalf("decode of a %d-byte hostile reply: %v", len(in), err)
	}
	return d.rd.Work()
}

// TestDecodeWorkIsLinear decodes each hostile text as a JSON-RPC message
// (the raw body kept, so its text pass counts too), as a gRPC message and
// as a field violation, at 64 KiB and 1 MiB: the redactor's work stays
// within decodeWorkFactor per byte of the input. Before issue 23 the same
// inputs cost thousands per byte (redact's TestTextWorkIsLinear shows it
// for each look; a 64 KiB "1-" took 2.9 s in ingest decode).
func TestDecodeWorkIsLinear(t *testing.T) {
	forms := []struct {
		name string
		make func(string, int) []byte
	}{{"jsonrpc-message", hostileReply}, {"grpc-message", hostileGRPC}, {"field-violation", hostileViolation}}
	for _, f := range forms {
		plain := f.make(plainMessage, bigText())
		if w := decodeWork(t, plain); w > decodeWorkFactor*len(plain)/4 {
			t.Errorf("%s: a plain %d-byte reply cost %d, %.1f per byte", f.name, len(plain), w, float64(w)/float64(len(plain)))
		}
		for _, p := range hostileMessages {
			for _, n := range []int{64 << 10, bigText()} {
				in := f.make(p, n)
				if w := decodeWork(t, in); w > decodeWorkFactor*len(in) {
					t.Errorf("%s: %q ×%d: the redactor examined %d bytes, %.0f per byte of input; want at most %d",
						f.name, p, n, w, float64(w)/float64(len(in)), decodeWorkFactor)
				}
			}
		}
	}
}

// grownSize is how far FuzzDecodeMessage grows an input: in the seed
// corpus run 1 MiB for a short one (a pattern, the shape of the issue's
// texts) and 64 KiB for the others (631 seeds); 16 KiB while fuzzing, so
// that the fuzzer keeps its pace. 16 KiB already separates a linear decode
// (under decodeWorkFactor bytes examined per byte) from a quadratic one
// (hundreds to thousands).
func grownSize(data []byte) int {
	f := flag.Lookup("test.fuzz")
	switch {
	case f != nil && f.Value.String() != "":
		return 16 << 10
	case len(data) <= 32:
		return bigText()
	}
	return 64 << 10
}

// bigText is 1 MiB, or 64 KiB under -race: the work count is the same
// with or without the race detector, which only makes it slow.
func bigText() int {
	if raceEnabled {
		return 64 << 10
	}
	return 1 << 20
}

// checkDecodeLinear is FuzzDecodeMessage's time invariant: the input,
// taken as a message text and repeated to about 1 MiB in a JSON-RPC error
// reply (grownSize), costs the redactor at most decodeWorkFactor bytes
// examined per byte of the reply, whatever the input.
func checkDecodeLinear(t *testing.T, data []byte) {
	if len(data) == 0 {
		return
	}
	in := hostileReply(string(data), grownSize(data))
	if w := decodeWork(t, in); w > decodeWorkFactor*len(in) {
		t.Fatalf("%q as a message grown to %d bytes: the redactor examined %d bytes, %.0f per byte (at most %d)",
			data, len(in), w, float64(w)/float64(len(in)), decodeWorkFactor)
	}
}
