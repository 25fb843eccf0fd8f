package redact

import (
	"strings"
	"testing"
)

// TestRawKeepsOnlyAllowedHeaderValues: the header block of a raw reply kept
// in a dead letter keeps the values of the allow-list only. Names a deny
// list misses (short generic names, a vendor's, a *-Token over 64 bytes, a
// URL with credentials in Location, WWW-Authenticate's error_description)
// lose their values; a name over 64 bytes goes too; a folded line and a
// line without a name go entirely. The status line and the kept values stay.
func TestRawKeepsOnlyAllowedHeaderValues(t *testing.T) {
	long := "X-" + strings.Repeat("Vendor-", 10) + "Token"
	in := "HTTP/1.1 503 Unavailable: try later\r\n" +
		"Content-Type: application/json\r\nRetry-After: 30\r\n" +
		"X-Key: planted-a1\r\nX-Session: planted-a2\r\nX-Auth: planted-a3\r\n" +
		long + ": planted-a4\r\n" +
		"Location: https://u:planted-a5@h.example/?access_token=planted-a6\r\n" +
		"WWW-Authenticate: Bearer error=\"invalid_token\", error_description=\"planted-a7\"\r\n" +
		"X-Note: first\r\n  planted-a8\r\n" +
		"planted-a9 without a colon\r\n" +
		"\r\n{\"error\":{\"message\":\"down\"}}"
	out := string(Raw(nil, []byte(in), 1<<20))
	if strings.Contains(out, "planted") {
		t.Errorf("a value outside the allow-list survived:\n%s", out)
	}
	if strings.Contains(out, long) {
		t.Errorf("a 64+ byte header name survived:\n%s", out)
	}
	for _, want := range []string{"HTTP/1.1 503 Unavailable: try later\r\n", "Content-Type: application/json\r\n", "Retry-After: 30\r\n",
		"X-Key: [redacted]\r\n", "WWW-Authenticate: [redacted]\r\n", "\r\n\r\n{\"error\":{\"message\":\"down\"}}"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
