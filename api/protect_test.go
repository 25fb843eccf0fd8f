package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestUnitProtect (fakes): a handler behind Protect is asked only with an
// accepted bearer token, within the body limit and the rate limit; what it
// reads of the body is bounded, its requests carry the client's key for
// the gates, and refusals never reach it.
func TestUnitProtect(t *testing.T) {
	t.Setenv("ERRTRAIL_TEST_TOKENS", "tok-1")
	h := newHarness(t, func(c *Config) { c.TokensEnv = "ERRTRAIL_TEST_TOKENS"; c.RPS, c.Burst = 1, 3 })
	var asked int
	var client string
	var read int
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked++
		client = clientOf(r.Context())
		b, _ := io.ReadAll(r.Body)
		read = len(b)
		w.WriteHeader(http.StatusOK)
	})
	p := h.s.Protect("mcp", 16, inner)
	do := func(body, auth string, chunked bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		if chunked {
			r.ContentLength = -1
		}
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		return w
	}
	for _, auth := range []string{"", "Bearer tok-2"} {
		if w := do("{}", auth, false); w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") == "" || asked != 0 {
			t.Errorf("auth %q: %d, asked %d; want 401 with WWW-Authenticate, the handler not asked", auth, w.Code, asked)
		}
	}
	if w := do(strings.Repeat("x", 17), "Bearer tok-1", false); w.Code != http.StatusRequestEntityTooLarge || asked != 0 {
		t.Errorf("a 17-byte body over a 16-byte limit: %d, asked %d; want 413 before the handler", w.Code, asked)
	}
	// A body of unknown length is cut at the limit while the handler reads.
	h.clock.Add(10e9) // refill the bucket
	if w := do(strings.Repeat("x", 100), "Bearer tok-1", true); asked != 1 || read > 16 {
		t.Errorf("a chunked body: %d, asked %d, read %d; want at most 16 bytes read", w.Code, asked, read)
	}
	if w := do("{}", "Bearer tok-1", false); w.Code != http.StatusOK || asked != 2 || client == "" {
		t.Errorf("with the token: %d, asked %d, client key %q; want 200 with the client's key in the context", w.Code, asked, client)
	}
	// The bucket holds 3: the fourth request at once is refused.
	codes := []int{}
	for i := 0; i < 3; i++ {
		codes = append(codes, do("{}", "Bearer tok-1", false).Code)
	}
	if codes[len(codes)-1] != http.StatusTooManyRequests || asked > 4 {
		t.Errorf("over the rate limit: codes %v, asked %d; want a 429 and the handler not asked", codes, asked)
	}
	if m := h.metrics(); !strings.Contains(m, `errtrail_api_requests_total{code="401",route="mcp"} 2`) ||
		!strings.Contains(m, `errtrail_api_rate_limited_total{route="mcp"}`) {
		t.Errorf("metrics:\n%s", m)
	}
	if strings.Contains(h.logs.String(), "tok-1") || strings.Contains(h.logs.String(), "/mcp") {
		t.Error("the access log holds the token or the path")
	}
}
