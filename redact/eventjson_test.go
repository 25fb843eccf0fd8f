package redact

import (
	"strings"
	"testing"
)

// TestRawEventHeadersOffTheList: a dead-lettered event's headers and
// trailers keep only the values of the allow-list, in both header forms,
// with array values, escaped names, and a message cut inside a value.
// Before, only the text pass ran over event JSON: a customer value in
// X-Customer-Note, a token split across two headers or the base64 lines of
// a key folded into a header value were kept.
func TestRawEventHeadersOffTheList(t *testing.T) {
	cases := []struct {
		in    string
		leaks []string
		keeps []string
	}{
		{
			in: `{"v":2,"reply":{"headers":{"X-Customer-Note":"call back planted-b1","Content-Type":"application/json",` +
				`"X-Token-Part1":"Bearer","X-Token-Part2":"planted-b2","Retry-After":"12","Set-Cookie":["planted-b3","x"]},"body":"x"}}`,
			leaks: []string{"planted-b1", "planted-b2", "planted-b3"},
			keeps: []string{`"Content-Type":"application/json"`, `"Retry-After":"12"`, `"X-Customer-Note":"[redacted]"`, `"body":"x"`},
		},
		{
			in: `{"v":2,"reply":{"headers":[["X-Client-Cert","MIIBplanted-b4\r\n planted-b5"],["X-Request-Id","req-77"],` +
				`["X-Api\u002dKey","planted-b6"]]}}`,
			leaks: []string{"planted-b4", "planted-b5", "planted-b6"},
			keeps: []string{`["X-Request-Id","req-77"]`},
		},
		{
			in:    `{"v":1,"reply":{"grpc":{"status":8,"trailers":{"x-note":"planted-b7","grpc-message":"slow down"}}}}`,
			leaks: []string{"planted-b7"},
			keeps: []string{`"grpc-message":"slow down"`},
		},
		{
			in:    `  {"v":1,"reply":{"headers" : { "X-Debug" : "planted-b8 \"quoted\" planted-b9`,
			leaks: []string{"planted-b8", "planted-b9"},
			keeps: []string{`"X-Debug" : "[redacted]`},
		},
	}
	for _, c := range cases {
		got := string(Raw(nil, []byte(c.in), 1<<20))
		for _, l := range c.leaks {
			if strings.Contains(got, l) {
				t.Errorf("Raw kept %q:\n in: %s\nout: %s", l, c.in, got)
			}
		}
		for _, k := range c.keeps {
			if !strings.Contains(got, k) {
				t.Errorf("Raw lost %q:\n in: %s\nout: %s", k, c.in, got)
			}
		}
	}
	// Not event JSON: a raw reply's body that names headers in prose.
	body := `error: "headers": {"X-Note": "kept as text"}`
	if got := string(Raw(nil, []byte(body), 1<<20)); got != body {
		t.Errorf("Raw(%q) = %q; want it unchanged", body, got)
	}
}
