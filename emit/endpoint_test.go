package emit

import (
	"strings"
	"testing"

	"github.com/errtrail/errtrail/redact"
)

// TestCleanEndpointStoresAsDecoder: emit cleans endpoints with the
// structure rule alone (internal/keep, without redact's text pass and its
// phone-number check). What leaves the process loses userinfo, query,
// fragment and value-like segments, and the decoder, running the whole
// rule on ingest, stores from the cleaned endpoint exactly what it stores
// from the original.
func TestCleanEndpointStoresAsDecoder(t *testing.T) {
	r := redact.New(nil)
	for _, c := range []struct{ in, want string }{
		{"https://agent.example/a2a/v1", "https://agent.example/a2a/v1"},
		{"https://user:hunter2@agent.example/jsonrpc?api_key=sk_live_4eC39HqLyjWDarjtT1zdp7dc#frag", "https://agent.example/jsonrpc"},
		{"user:pa/ss@agent.example/x", "agent.example/x"},
		{"https://agent.example/tasks/8c1d52a0-1b7e-4b36-9d0a-6f3f2c1b9e77/cancel", "https://agent.example/tasks/{id}/cancel"},
		{"https://agent.example/customers/alice@example.com/orders/123456789", "https://agent.example/customers/{id}/orders/{id}"},
		{"https://agent.example/keys/Kq3vZ8pLw2xY/rotate", "https://agent.example/keys/{id}/rotate"},
		{"http://Kq3vZ8pLw2xY:8080/v2beta/search", "http://{host}/v2beta/search"},
		{"grpc://10.0.0.7:50051", "grpc://10.0.0.7:50051"},
		{"https://agent.example/hooks/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "https://agent.example/hooks/{id}"},
		{"https://agent.example/call/+44 20 7946 0958", "https://agent.example/call/{id}"},
		{"", ""},
	} {
		got := CleanEndpoint(c.in)
		if c.want != "" && got != c.want {
			t.Errorf("CleanEndpoint(%q) = %q; want %q", c.in, got, c.want)
		}
		for _, secret := range []string{"hunter2", "sk_live", "pa/ss", "alice@", "Kq3vZ8pLw2xY", "eyJ", "frag", "7946"} {
			if strings.Contains(got, secret) {
				t.Errorf("CleanEndpoint(%q) = %q keeps %q", c.in, got, secret)
			}
		}
		if stored, direct := r.Endpoint(got), r.Endpoint(c.in); stored != direct {
			t.Errorf("%q: the decoder stores %q from the cleaned %q, %q from the original", c.in, stored, got, direct)
		}
		if again := CleanEndpoint(got); again != got {
			t.Errorf("CleanEndpoint is not idempotent on %q: %q", got, again)
		}
	}
}
