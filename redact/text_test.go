package redact

import (
	"strings"
	"testing"
)

// textCases: each input, and what the text pass must make of it.
var textCases = []struct{ in, want string }{
	// Secret-named keys, whatever the value.
	{"key=AKIAIOSFODNN7EXAMPLE rejected", "key=[secret] rejected"},
	{"api_key=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", "api_key=[secret]"},
	{"GET /v1/x?token=sk_live_4eC39HqLyjWDarjtT1zdp7dc&page=2", "GET /v1/x?token=[secret]&page=2"},
	{"session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "session=[secret]"},
	{"password=hunter2 was wrong", "password=[secret] was wrong"},
	{"login failed, password: Tr0ub4dor&3", "login failed, password: [secret]&3"},
	{`{"password":"p@ss w0rd","user":"x"}`, `{"password":"[secret]","user":"x"}`},
	{`{\"client_secret\":\"abc123xyz\"}`, `{\"client_secret\":\"[secret]\"}`},
	{"Cookie: sid=ab12cd; theme=dark\nAccept: */*", "Cookie: [secret]\nAccept: */*"},
	{"X-Api-Key: k3y9", "X-Api-Key: [secret]"},
	{`["X-Auth-Token", "t0k3n1"]`, `["X-Auth-Token", "[secret]"]`},
	{"Authorization: Token 9f8e7d", "Authorization: [secret]"},
	{`Authorization: Digest username="bob", response="6629fae49393a05397450978507c4ef1"`, `Authorization: [secret]`},
	{"aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key=[secret]"},
	// Authentication schemes with any whitespace.
	{"sent Bearer\tabc123def456", "sent Bearer\t[token]"},
	{"Bearer  mF_9.B5f-4.1JqM", "Bearer  [token]"},
	{"Basic dXNlcjpwYXNzd29yZA==", "Basic [token]"},
	// JWTs and provider keys anywhere.
	{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl expired", "jwt [jwt] expired"},
	{"x=ghp_1234567890abcdefghijklmnopqrstuvwxyzAB", "x=[key]"},
	{"/hooks/glpat-abcdefghij0123456789", "/hooks/[key]"},
	{"k%3Dsk_live_4eC39HqLyjWDarjtT1zdp7dc", "k%3D[key]"},
	{"use xoxb-123456789012-abcdefghijkl", "use [key]"},
	{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY leaked", "[key] leaked"},
	// PEM blocks, whole.
	{"key -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\nkqhkiG9w0BAQEF\n-----END PRIVATE KEY----- end", "key [pem] end"},
	{"-----BEGIN RSA PRIVATE KEY-----\nMIIEvQIBADANBg", "[pem]"},
	// URL userinfo.
	{"dial postgres://app:S3cr3t@db.internal:5432/x failed", "dial postgres://[userinfo]@db.internal:5432/x failed"},
	{"upstream svc:S3cr3tPw@api.example.com down", "upstream [userinfo]@api.example.com down"},
	{"https://u:pa/ss@host.example/x", "https://[userinfo]@host.example/x"},
	// E-mail addresses, also percent-encoded.
	{"no user alice@example.com", "no user [email]"},
	{"to=alice%40example.com", "to=[email]"},
	// Cards (Luhn), IBANs (mod 97).
	{"card 4111111111111111 declined", "card [card] declined"},
	{"card 4111-1111-1111-1111", "card [card]"},
	{"amex 378282246310005", "amex [card]"},
	{"iban DE89370400440532013000", "iban [iban]"},
	{"iban GB82 WEST 1234 5698 7654 32 ok", "iban [iban] ok"},
	// Phone numbers.
	{"call +44 7911 123456", "call [phone]"},
	{"call 07911 123456", "call [phone]"},
	{"Tel 030 12345678", "Tel [phone]"},
	{"mobil 0151/12345678", "mobil [phone]"},
	{"sms 4155552671 now", "sms [phone] now"},
	{"tel:+14155552671", "tel:[phone]"},
	{"n=%2B4915112345678", "n=[phone]"},
	{"(415) 555-2671", "[phone]"},
}

// keepCases must pass through unchanged.
var keepCases = []string{
	"Rate limit exceeded: 60 requests per 60 s",
	"at 2026-12-01 06:13:57 the agent failed",
	"at 2026-12-01T06:13:57Z",
	"at 2026-12-01T06:13:57.123+01:00",
	"10.0.0.12:8080 refused",
	"[2001:db8::1]:443 refused",
	"lodash@4.17.21 is required",
	"@a2a-js/sdk@1.3.0",
	"git@github.com:errtrail/errtrail.git",
	"commit 3f786850e387550fdab836ed7e6dc881de23001b",
	"sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
	"task bbfb9ea5-50ea-4441-b991-2a8ba0d6f3f3 not found",
	"req 01HZ9RATE01XYZ7ABCDEFGHJK",
	"trace 4bf92f3577b34da6a3ce929d0e0e4736",
	"traceparent 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	"order ORD-2026-000123 failed",
	"order #123456789",
	"ISBN 978-3-16-148410-0",
	"model gpt-4o-2024-08-06 overloaded",
	"model claude-3-5-sonnet-20241022",
	"offset 1764569637000",
	"epoch 1764569637",
	"Basic plan limit exceeded",
	"Bearer token required",
	"Token expired",
	"Missing required key: name",
	"WWW-Authenticate: Bearer realm=\"agents\", error=\"invalid_token\"",
	"retry in 12s (RetryInfo)",
	"version v2.6.0 of a2a-go",
	"on 01/12/2026",
	"port range 8000-8999",
	"size 1048576 bytes",
	"user@localhost denied",
	"ghost@acme not found",
	"sha512-Lo7c+tGhZx6n0Qy3Z1Kk2cT8Zt0w2lXhQ9g7nN2dG0sP3fY4bE5jR6mH7kL8vW9aB0cD1eF2gH3iJ4kL5mN6oP==",
	"x-request-id: 7f3c2a1b-0d9e-4c8b-a7f6-e5d4c3b2a190",
	"tokens=100 max_tokens: 4096",
}

func TestTextReplaces(t *testing.T) {
	for _, c := range textCases {
		got := Text(c.in)
		if got != c.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestTextKeepsOrdinaryText(t *testing.T) {
	for _, s := range keepCases {
		if got := Text(s); got != s {
			t.Errorf("Text(%q) = %q; want it unchanged", s, got)
		}
		if _, changed := AppendText(nil, s); changed {
			t.Errorf("AppendText(%q) reported a change", s)
		}
	}
}

func TestAppendTextAppends(t *testing.T) {
	dst := []byte("prefix|")
	out, changed := AppendText(dst, "mail bob@example.org")
	if !changed || string(out) != "prefix|mail [email]" {
		t.Fatalf("got %q, %v", out, changed)
	}
	out, changed = AppendText(dst, "nothing here")
	if changed || string(out) != "prefix|" {
		t.Fatalf("unchanged text: got %q, %v; want dst as it was", out, changed)
	}
}

func TestTextNoAllocWithoutPhone(t *testing.T) {
	s := "Caller orchestrator-7 exceeded 60 SendMessage calls per minute; Bearer abc123def456 ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"
	buf := make([]byte, 0, 512)
	n := testing.AllocsPerRun(100, func() { buf, _ = AppendText(buf[:0], s) })
	if n != 0 {
		t.Fatalf("AppendText allocates %v times per call; want 0", n)
	}
	if strings.Contains(string(buf), "abc123def456") || strings.Contains(string(buf), "ghp_") {
		t.Fatalf("not redacted: %q", buf)
	}
}

func TestSensitiveHeader(t *testing.T) {
	for _, n := range []string{"Authorization", "proxy-authorization", "Cookie", "Set-Cookie", "X-Api-Key", "api-key",
		"X-Auth-Token", "X-Amz-Security-Token", "X-Session-Id", "DPoP", "X-CSRF-Token", "X-Client-Secret"} {
		if !SensitiveHeader(n) {
			t.Errorf("SensitiveHeader(%q) = false; want true", n)
		}
	}
	for _, n := range []string{"Content-Type", "Retry-After", "RateLimit-Policy", "X-Request-Id", "WWW-Authenticate",
		"Idempotency-Key", "X-RateLimit-Reset", "A2A-Extensions", "Grpc-Status-Details-Bin"} {
		if SensitiveHeader(n) {
			t.Errorf("SensitiveHeader(%q) = true; want false", n)
		}
	}
}

// Forms the end-to-end planted-secret test found in dead-letter raw bytes.
func TestTextEncodedForms(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`"X-Api-Key":"Bearer\tkXhzjaErJRgjzJclUlkjpcZsNlOt","b":1`, `"X-Api-Key":"[secret]","b":1`},
		{`"api_key":"Digest username=\"ops-bot\", response=\"af0991af673f821f9f9abce21e726032\""},`, `"api_key":"[secret]"},`},
		{`{\"token\":\"abc123\"}`, `{\"token\":\"[secret]\"}`},
		{"payment%20declined%20for%20card%204370042796335400", "payment%20declined%20for%20card%20[card]"},
		{"payout%20to%20IBAN%20GB09%20WEST%206518%202483%203651%2033%20bounced", "payout%20to%20IBAN%20[iban]%20bounced"},
		{"email=jonas.brandt%2540acme-logistik.example%20returned", "email=[email]%20returned"},
		{"call%20%2B44%207911%20123456", "call%20[phone]"},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// A text full of phone-like numbers costs at most phoneChecks library
// checks; the numbers after them are replaced without one.
func TestPhoneChecksAreBounded(t *testing.T) {
	s := strings.Repeat("order 0000123456, ", phoneChecks) + "then 0000654321 and 07911 123456"
	got := Text(s)
	if strings.Count(got, "0000123456") != phoneChecks {
		t.Errorf("the first %d candidates were checked and kept: %q", phoneChecks, got)
	}
	if strings.Contains(got, "0000654321") || strings.Contains(got, "123456\"") || strings.Contains(got, "07911") {
		t.Errorf("a candidate past the budget survived: %q", got)
	}
}
