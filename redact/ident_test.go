package redact

import (
	"strings"
	"testing"
)

func TestIdentKeepsIdentifiers(t *testing.T) {
	r := New([]byte("k"))
	for _, s := range []string{"err_01HZ9RATE01", "req_01HXY4K2VNJQP7R8MWDB3CSTF", "bbfb9ea5-50ea-4441-b991-2a8ba0d6f3f3",
		"orchestrator-7", "caller:orchestrator-7", "ghost@acme", "research-agent", "per-caller", "RATE_LIMIT_EXCEEDED",
		"agents.example.com", "SendMessage", "tasks/get", "4bf92f3577b34da6a3ce929d0e0e4736", "req-41", "42"} {
		got, replaced := r.AppendIdent(nil, s, ID)
		if replaced || string(got) != s {
			t.Errorf("AppendIdent(%q) = %q, %v; want it kept", s, got, replaced)
		}
	}
	if got, _ := r.AppendIdent(nil, "60 requests per 60 s", Name); string(got) != "60 requests per 60 s" {
		t.Errorf("Name grammar: got %q", got)
	}
}

func TestIdentHashesValuesOutsideTheGrammarOrFlagged(t *testing.T) {
	r := New([]byte("deployment-key"))
	for _, s := range []string{
		"alice@example.com", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "Bearer abc123def456", "AKIAIOSFODNN7EXAMPLE",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "+447911123456", "has space", "semi;colon",
		strings.Repeat("a", MaxIdent+1), "4111111111111111", "password=hunter2", "line\nbreak",
	} {
		got, replaced := r.AppendIdent(nil, s, ID)
		if !replaced {
			t.Errorf("AppendIdent(%q) kept it", s)
			continue
		}
		if !strings.HasPrefix(string(got), HashPrefix) || len(got) != len(HashPrefix)+hashHex {
			t.Errorf("AppendIdent(%q) = %q; want %s and %d hex digits", s, got, HashPrefix, hashHex)
		}
		if string(got) != r.Lookup(s) {
			t.Errorf("Lookup(%q) = %q; want the stored %q", s, r.Lookup(s), got)
		}
	}
}

func TestIdentHashIsKeyed(t *testing.T) {
	a, b := New([]byte("one")), New([]byte("two"))
	v := "alice@example.com"
	if a.Lookup(v) == b.Lookup(v) {
		t.Fatal("two deployment keys give the same hash")
	}
	if a.Lookup(v) != New([]byte("one")).Lookup(v) {
		t.Fatal("the same key gives different hashes")
	}
	if a.Lookup(v) == a.Lookup("bob@example.com") {
		t.Fatal("two values give the same hash")
	}
}

func TestIdentNoAlloc(t *testing.T) {
	r := New([]byte("k"))
	buf := make([]byte, 0, 256)
	n := testing.AllocsPerRun(100, func() {
		buf, _ = r.AppendIdent(buf[:0], "err_01HZ9RATE01", ID)
		buf, _ = r.AppendIdent(buf[:0], "alice@example.com", ID)
	})
	if n != 0 {
		t.Fatalf("AppendIdent allocates %v times; want 0", n)
	}
}

func TestPath(t *testing.T) {
	r := New(nil)
	for _, c := range []struct{ in, want string }{
		{"message.messageId", "message.messageId"},
		{"message.parts[0].text", "message.parts[0].text"},
		{"/filters/features_all", "/filters/features_all"},
		{"/vehicle_of_interest/condition", "/vehicle_of_interest/condition"},
		{"contacts[alice@example.com].phone", "contacts[{value}].phone"},
		{"/users/alice.smith@example.com/name", "/users/{value}/name"},
		{"/customers/48213977/address", "/customers/{value}/address"},
		{"params.token_sk_live_4eC39HqLyjWDarjtT1zdp7dc", "params.{value}"},
		{"/leads/0/contact/+447911123456", "/leads/0/contact/{value}"},
		{"headers[Bearer abc123def456]", "headers[{value}]"},
	} {
		if got := r.Path(c.in); got != c.want {
			t.Errorf("Path(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestEndpoint(t *testing.T) {
	r := New(nil)
	for _, c := range []struct{ in, want string }{
		{"https://agent.example.com/a2a/v1", "https://agent.example.com/a2a/v1"},
		{"https://agent.example.com:8443/a2a/rest/tasks/bbfb9ea5-50ea-4441-b991-2a8ba0d6f3f3:cancel", "https://agent.example.com:8443/a2a/rest/tasks/{id}:cancel"},
		{"https://svc:S3cr3t@agent.example.com/rpc?token=abc#frag", "https://agent.example.com/rpc"},
		{"svc:S3cr3t@agent.example.com/rpc", "agent.example.com/rpc"},
		{"https://svc:pa/ss@agent.example.com/rpc", "https://agent.example.com/rpc"},
		{"https://svc:p@ss@agent.example.com/rpc", "https://agent.example.com/rpc"},
		{"https://agent.example.com/users/alice@example.com/tasks", "https://agent.example.com/users/{id}/tasks"},
		{"https://agent.example.com/v1/customers/48213977", "https://agent.example.com/v1/customers/{id}"},
		{"http://10.0.0.12:8080/mcp", "http://10.0.0.12:8080/mcp"},
		{"/a2a/v0.3/message:send", "/a2a/v0.3/message:send"},
		{"https://hooks.example.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX", "https://hooks.example.com/services/{id}"},
	} {
		if got := r.Endpoint(c.in); got != c.want {
			t.Errorf("Endpoint(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestRawDropsCredentialHeaders(t *testing.T) {
	in := "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nSet-Cookie: sid=ab12cd; Path=/\r\nX-Api-Key: k3y9\r\n" +
		"X-Request-Id: req-1\r\n\r\n{\"error\":\"bad\",\"token\":\"t0k\",\"mail\":\"bob@example.org\"}"
	got := string(Raw(nil, []byte(in), 4096))
	for _, leak := range []string{"ab12cd", "k3y9", "t0k", "bob@example.org"} {
		if strings.Contains(got, leak) {
			t.Errorf("Raw kept %q:\n%s", leak, got)
		}
	}
	for _, keep := range []string{"HTTP/1.1 401 Unauthorized", "Content-Type: application/json", "Set-Cookie: [redacted]", "X-Request-Id: req-1", `"error":"bad"`} {
		if !strings.Contains(got, keep) {
			t.Errorf("Raw lost %q:\n%s", keep, got)
		}
	}
}

func TestRawEventJSONAndCap(t *testing.T) {
	in := `{"v":9,"reply":{"headers":{"X-Api-Key":"k3y9zz","Content-Type":"application/json"},"body":"x"}}`
	got := string(Raw(nil, []byte(in), 4096))
	if strings.Contains(got, "k3y9zz") || !strings.Contains(got, `"Content-Type":"application/json"`) {
		t.Errorf("Raw(event) = %s", got)
	}
	// The cut comes after redaction: a JWT across the cap is not kept in part.
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
	got = string(Raw(nil, []byte("error "+jwt), 20))
	if strings.Contains(got, "eyJhbGci") || len(got) > 20 {
		t.Errorf("Raw(cut) = %q", got)
	}
	got = string(Raw(nil, []byte("bad \xff\x00 byte é"), 100))
	if got != "bad ?? byte é" {
		t.Errorf("Raw(control) = %q", got)
	}
}
