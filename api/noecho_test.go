package api

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// TestUnitNoEcho plants secrets as the id, the agent and every query
// value, on every route and through every answer the fakes can cause, and
// checks that none comes back: not in an answer's body or headers, not in
// a log line, not in the metrics. The metrics' route labels are route
// templates (or "other").
func TestUnitNoEcho(t *testing.T) {
	const secret = "PLANTED-sk_live_51xyz"
	t.Setenv("ERRTRAIL_TEST_TOKENS", "tok-1")
	answers := map[string]error{
		"story":       nil,
		"not found":   lookup.ErrNotFound,
		"ambiguous":   &lookup.AmbiguousError{Matches: []lookup.Match{sampleMatch("ev-1")}, Total: 3},
		"bad id":      &lookup.BadIDError{Reason: "too long"},
		"unavailable": &lookup.UnavailableError{Err: errors.New("connection refused")},
		"internal":    errors.New("boom"),
		"bad range":   &report.BadRangeError{From: t0, To: t0, Reason: "from must be before to"},
	}
	v := url.QueryEscape(secret)
	targets := []string{
		"/v1/errors/" + v + "?agent=" + v + "&event_id=" + v,
		"/v1/errors/" + v + "?agent=" + v + "&agent=" + v,
		"/v1/errors/" + v + "?" + v + "=" + v,
		"/v1/errors/" + v + "?kind=" + v,
		"/v1/errors?agent=" + v + "&caller=" + v + "&kind=quota&cursor=" + v + "&from=2026-03-04T11:00:00Z",
		"/v1/errors?limit=" + v,
		"/v1/errors?from=" + v,
		"/v1/errors?to=" + v + "%00",
		"/v1/agents/" + v + "/report?from=2026-03-04T11:00:00Z",
		"/v1/agents/" + v + "/report?to=" + v,
		"/v1/report?" + v,
		"/v1/" + v,
		"/" + v + "/errors/" + v,
		"/healthz?" + v + "=1",
		"/metrics?x=" + v,
	}
	for name, err := range answers {
		for _, auth := range []bool{false, true} {
			h := newHarness(t, func(c *Config) {
				if auth {
					c.TokensEnv = "ERRTRAIL_TEST_TOKENS"
				}
				c.RPS, c.Burst = 1, 3
			})
			if err != nil {
				h.svc.story = func(context.Context, string, lookup.FindOptions) (*lookup.Story, error) { return nil, err }
				h.svc.list = func(context.Context, lookup.ListQuery) (*lookup.Page, error) { return nil, err }
				h.rep.report = func(context.Context, string, time.Time, time.Time) (*report.Report, error) { return nil, err }
			}
			var seen strings.Builder
			for _, target := range targets {
				for _, hdr := range [][]string{nil, {"Authorization: Bearer tok-1"}, {"Authorization: Bearer " + secret}} {
					a := h.get(target, hdr...)
					seen.Write(a.body)
					for k, vs := range a.header {
						seen.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
					}
				}
			}
			m := h.metrics()
			for where, text := range map[string]string{"answers": seen.String(), "log": h.logs.String(), "metrics": m} {
				if strings.Contains(text, "PLANTED") || strings.Contains(text, "sk_live") {
					t.Errorf("%s (auth %v): the secret is in the %s", name, auth, where)
				}
			}
			allowed := []string{routeOther}
			for _, rt := range routes {
				allowed = append(allowed, rt.pattern)
			}
			for _, mm := range regexp.MustCompile(`route="([^"]*)"`).FindAllStringSubmatch(m, -1) {
				if !slices.Contains(allowed, mm[1]) {
					t.Errorf("route label %q is not a route template", mm[1])
				}
			}
			if !strings.Contains(m, `route="/v1/errors/{id}"`) {
				t.Errorf("no request of /v1/errors/{id} counted")
			}
		}
	}
}

// TestUnitAccessLog: one line per request with the route template, the
// status, the duration and a client hash that tells clients apart.
func TestUnitAccessLog(t *testing.T) {
	h := newHarness(t, nil)
	// The id has letters no hex hash or number holds: "abc" was found in
	// the 12-hex client hash one run in about 400.
	const id = "err_qzqz"
	h.get("/v1/errors/"+id, "X-Test-Remote: 192.0.2.1:5")
	h.get("/v1/errors/"+id, "X-Test-Remote: 192.0.2.2:5")
	lines := strings.Split(strings.TrimSpace(h.logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines; want 2:\n%s", len(lines), h.logs.String())
	}
	re := regexp.MustCompile(`"client":"([0-9a-f]{12})"`)
	var clients []string
	for _, l := range lines {
		for _, want := range []string{`"msg":"request"`, `"route":"/v1/errors/{id}"`, `"status":200`, `"duration":`, `"method":"GET"`} {
			if !strings.Contains(l, want) {
				t.Errorf("log line without %s: %s", want, l)
			}
		}
		if strings.Contains(l, id) || strings.Contains(l, "qzqz") || strings.Contains(l, "192.0.2") {
			t.Errorf("log line holds the id or the address: %s", l)
		}
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("no client hash: %s", l)
		}
		clients = append(clients, m[1])
	}
	if clients[0] == clients[1] {
		t.Errorf("two addresses, one client hash")
	}
}
