package parse

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// benchCases are the replies BenchmarkDecode measures, one per envelope kind.
var benchCases = []struct{ name, file string }{
	{"a2a-jsonrpc-ratelimit", "seeds/seed002-jsonrpc-429.http"},
	{"a2a-rest-ratelimit", "seeds/seed002-rest-429.http"},
	{"a2a-jsonrpc-task-not-found", "seeds/seed003-jsonrpc-task-not-found.http"},
	{"aap-a2a-rate-limited", "seeds/seed000-a2a-rate-limited.http"},
	{"aap-pap", "seeds/seed000-pap-unsupported-filter.http"},
	{"aap-mcp-tool-result", "seeds/seed000-mcp-unsupported-filter.http"},
	{"relay-jsonrpc", "seeds/seed004-relay-jsonrpc-recipient-not-found.http"},
	{"relay-rest", "seeds/seed004-relay-rest-rate-limited.http"},
	{"bare-500", "seeds/seed002-bare-500.http"},
	{"grpc-resource-exhausted", "cases/grpc-resource-exhausted.grpc"},
	{"event-json-ratelimit", "cases/event-jsonrpc-429.json"},
	{"event-json-body-json-ratelimit", "cases/event-body-json.json"},
}

func BenchmarkDecode(b *testing.B) {
	for _, c := range benchCases {
		data, err := os.ReadFile(filepath.Join("testdata", c.file))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			d := NewDecoder(Options{KeepRaw: -1})
			var rec Record
			if err := d.DecodeMessage(data, nil, 1764489600000, &rec); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := d.DecodeMessage(data, nil, 1764489600000, &rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// Baselines on the same reply. encoding-json decodes only the body
	// into plain structs (no classification at all); nethttp-encoding-json
	// also frames the raw response with net/http, as a straightforward
	// decoder would.
	data, err := os.ReadFile(filepath.Join("testdata", "seeds/seed002-jsonrpc-429.http"))
	if err != nil {
		b.Fatal(err)
	}
	body := data[len(data)-bodyLen(data):]
	b.Run("baseline-encoding-json/a2a-jsonrpc-ratelimit", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var resp stdJSONRPCResponse
			if err := json.Unmarshal(body, &resp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline-nethttp-encoding-json/a2a-jsonrpc-ratelimit", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data)), nil)
			if err != nil {
				b.Fatal(err)
			}
			var out stdJSONRPCResponse
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				b.Fatal(err)
			}
			_ = resp.Header.Get("Retry-After")
		}
	})
}

type stdJSONRPCResponse struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    []struct {
			Type       string            `json:"@type"`
			Reason     string            `json:"reason"`
			Domain     string            `json:"domain"`
			Metadata   map[string]string `json:"metadata"`
			RetryDelay string            `json:"retryDelay"`
		} `json:"data"`
	} `json:"error"`
}

// bodyLen returns the length of the body of a raw HTTP response.
func bodyLen(raw []byte) int {
	for i := 0; i+3 < len(raw); i++ {
		if raw[i] == '\r' && raw[i+1] == '\n' && raw[i+2] == '\r' && raw[i+3] == '\n' {
			return len(raw) - i - 4
		}
	}
	return 0
}

// BenchmarkDecodeHostile decodes a JSON-RPC error reply whose message is
// each hostile text of linear_test.go, at 64 KiB and 1 MiB, next to plain
// prose of the same size: framing, JSON, classification and redaction of
// the message and of the kept raw body (the default Options.KeepRaw).
// ns/op grows with the size, not with its square; work/B is the
// redactor's bytes examined per byte of input.
func BenchmarkDecodeHostile(b *testing.B) {
	for _, n := range []int{64 << 10, 1 << 20} {
		for _, p := range append([]string{plainMessage}, hostileMessages...) {
			in := hostileReply(p, n)
			name := p
			if p == plainMessage {
				name = "plain"
			}
			b.Run(fmt.Sprintf("%dKiB/%s", n>>10, name), func(b *testing.B) {
				d := NewDecoder(Options{MaxBytes: 4 << 20})
				var rec Record
				if err := d.DecodeMessage(in, nil, 1764489600000, &rec); err != nil {
					b.Fatal(err)
				}
				w0 := d.rd.Work()
				b.SetBytes(int64(len(in)))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := d.DecodeMessage(in, nil, 1764489600000, &rec); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(d.rd.Work()-w0)/float64(b.N)/float64(len(in)), "work/B")
			})
		}
	}
}
