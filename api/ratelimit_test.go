package api

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestUnitRateLimit: a client gets its burst, then 429 with a Retry-After
// of whole seconds, at least 1, while another client (by address, or by
// token behind the same address) is served; the bucket refills with time;
// probes are not limited.
func TestUnitRateLimit(t *testing.T) {
	t.Setenv("ERRTRAIL_TEST_TOKENS", "tok-1,tok-2")
	h := newHarness(t, func(c *Config) { c.RPS, c.Burst = 0.5, 3; c.TokensEnv = "ERRTRAIL_TEST_TOKENS" })
	get := func(remote, tok string) answer {
		return h.get("/v1/errors/x", "X-Test-Remote: "+remote, "Authorization: Bearer "+tok)
	}
	for i := range 3 {
		if a := get("192.0.2.1:1000", "tok-1"); a.status != 200 {
			t.Fatalf("request %d of the burst: %d", i+1, a.status)
		}
	}
	a := get("192.0.2.1:1001", "tok-1")
	if a.status != 429 || a.problemCode() != "rate-limited" {
		t.Fatalf("past the burst: %d %s", a.status, a.body)
	}
	if s, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || s != 2 {
		t.Errorf("Retry-After %q; want 2 (one token at 0.5/s)", a.header.Get("Retry-After"))
	}
	if a := get("192.0.2.1:1000", "tok-2"); a.status != 200 {
		t.Errorf("another token behind the same address: %d", a.status)
	}
	if a := h.get("/v1/errors/x", "X-Test-Remote: 198.51.100.7:1"); a.status != 401 {
		t.Errorf("another address without a token: %d; want 401 (limited apart, then refused)", a.status)
	}
	if a := h.get("/healthz", "X-Test-Remote: 192.0.2.1:1000"); a.status != 200 {
		t.Errorf("healthz limited: %d", a.status)
	}
	h.clock.Add(1500 * time.Millisecond)
	if a := get("192.0.2.1:1000", "tok-1"); a.status != 429 || a.header.Get("Retry-After") != "1" {
		t.Errorf("0.75 token after 1.5s: %d Retry-After %q; want 429 and 1", a.status, a.header.Get("Retry-After"))
	}
	h.clock.Add(time.Second)
	if a := get("192.0.2.1:1000", "tok-1"); a.status != 200 {
		t.Errorf("after refill: %d", a.status)
	}
	m := h.metrics()
	if !strings.Contains(m, `errtrail_api_rate_limited_total{route="/v1/errors/{id}"} 2`) {
		t.Errorf("rate limited not counted:\n%s", grepLines(m, "rate_limited"))
	}

	// Without a token, clients are their addresses.
	ha := newHarness(t, func(c *Config) { c.RPS, c.Burst = 1, 1 })
	if ha.get("/v1/errors", "X-Test-Remote: 192.0.2.9:1").status != 200 || ha.get("/v1/errors", "X-Test-Remote: 192.0.2.9:2").status != 429 {
		t.Errorf("one address, two ports: not one client")
	}
	if ha.get("/v1/errors", "X-Test-Remote: [2001:db8::1]:1").status != 200 {
		t.Errorf("another address limited")
	}
}

// TestUnitLimiterBounded: the limiter keeps at most max buckets, dropping
// the least recently seen.
func TestUnitLimiterBounded(t *testing.T) {
	l := newLimiter(1, 1, 2)
	now := t0
	l.allow("a", now)
	l.allow("b", now)
	l.allow("a", now) // a is now the most recent; b goes first
	l.allow("c", now)
	if n := l.clients(); n != 2 {
		t.Fatalf("%d buckets; want 2", n)
	}
	if ok, _ := l.allow("a", now); ok {
		t.Errorf("a was dropped instead of b")
	}
	if ok, _ := l.allow("b", now); !ok {
		t.Errorf("b was kept: it should come back with a full bucket")
	}
	for i := range 1000 {
		l.allow(strconv.Itoa(i), now)
	}
	if n := l.clients(); n != 2 {
		t.Errorf("%d buckets after 1000 clients", n)
	}
	if newLimiter(0, 5, 5) != nil {
		t.Errorf("RPS 0 built a limiter")
	}
	for _, c := range []struct {
		wait time.Duration
		want int
	}{{0, 1}, {time.Nanosecond, 1}, {time.Second, 1}, {1001 * time.Millisecond, 2}, {90 * time.Second, 90}} {
		if got := retryAfter(c.wait); got != c.want {
			t.Errorf("retryAfter(%v) = %d; want %d", c.wait, got, c.want)
		}
	}
}
