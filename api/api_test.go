package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// TestUnitStory: the story route passes the unescaped id and the options
// to the (fake) service and answers its story as it is.
func TestUnitStory(t *testing.T) {
	h := newHarness(t, nil)
	a := h.get("/v1/errors/a%2Fb%20c?agent=alpha&event_id=ev-1")
	if a.status != http.StatusOK {
		t.Fatalf("status %d; want 200: %s", a.status, a.body)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if h.svc.gotID != "a/b c" || h.svc.gotOpt != (lookup.FindOptions{Agent: "alpha", EventID: "ev-1"}) {
		t.Errorf("service got id %q, options %+v", h.svc.gotID, h.svc.gotOpt)
	}
	var got lookup.Story
	if err := json.Unmarshal(a.body, &got); err != nil {
		t.Fatal(err)
	}
	if want := sampleStory(); !reflect.DeepEqual(got, want) {
		t.Errorf("story changed on the way:\n got %+v\nwant %+v", got, want)
	}
}

// TestUnitStoryErrors: each answer of the lookup becomes its status and
// problem code.
func TestUnitStoryErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"not found", lookup.ErrNotFound, 404, "not-found"},
		{"wrapped not found", errors.Join(errors.New("x"), lookup.ErrNotFound), 404, "not-found"},
		{"ambiguous", &lookup.AmbiguousError{Matches: []lookup.Match{sampleMatch("ev-2"), sampleMatch("ev-1")}, Total: 7}, 300, "ambiguous-id"},
		{"bad id", &lookup.BadIDError{Reason: "too short"}, 400, "bad-id"},
		{"unavailable", &lookup.UnavailableError{Err: errors.New("dial tcp: connection refused")}, 503, "unavailable"},
		{"unavailable by deadline", &lookup.UnavailableError{Err: context.DeadlineExceeded}, 504, "timeout"},
		{"other", errors.New("boom"), 500, "internal"},
		{"no story, no error", nil, 500, "internal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.svc.story = func(context.Context, string, lookup.FindOptions) (*lookup.Story, error) { return nil, c.err }
			a := h.get("/v1/errors/some-id")
			if a.status != c.status || a.problemCode() != c.code {
				t.Fatalf("got %d %q; want %d %q: %s", a.status, a.problemCode(), c.status, c.code, a.body)
			}
			if ct := a.header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q", ct)
			}
			var p problem
			_ = json.Unmarshal(a.body, &p)
			if p.Type != problemType+c.code || p.Status != c.status {
				t.Errorf("problem %+v", p)
			}
			if c.code == "ambiguous-id" && (len(p.Matches) != 2 || p.Total == nil || *p.Total != 7 || p.Matches[0].EventID != "ev-2") {
				t.Errorf("ambiguous: matches %+v total %d", p.Matches, p.Total)
			}
			if c.code == "bad-id" && !strings.Contains(p.Detail, "too short") {
				t.Errorf("bad-id detail %q lost the reason", p.Detail)
			}
			if c.status >= 500 && !strings.Contains(h.logs.String(), `"level":"WARN"`) {
				t.Errorf("a %d is not logged as a warning: %s", c.status, h.logs.String())
			}
		})
	}
}

// TestUnitBadIDReasonEchoingID: a reason that contains the id (a store
// that breaks its contract) is dropped, not passed on.
func TestUnitBadIDReasonEchoingID(t *testing.T) {
	h := newHarness(t, nil)
	h.svc.story = func(_ context.Context, id string, _ lookup.FindOptions) (*lookup.Story, error) {
		return nil, &lookup.BadIDError{Reason: "bad byte in " + id}
	}
	a := h.get("/v1/errors/planted-SECRET-1")
	if a.status != 400 || strings.Contains(string(a.body), "planted-SECRET-1") {
		t.Fatalf("%d %s", a.status, a.body)
	}
}

// TestUnitList: defaults (last hour, 50 a page), every parameter passed
// through checked, an empty page as [] not null.
func TestUnitList(t *testing.T) {
	h := newHarness(t, nil)
	now := h.clock.Now()
	a := h.get("/v1/errors")
	if a.status != 200 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if q := h.svc.gotList; q.Limit != lookup.DefaultListLimit || !q.To.Equal(now) || !q.From.Equal(now.Add(-time.Hour)) {
		t.Errorf("defaults: %+v", q)
	}
	var p lookup.Page
	_ = json.Unmarshal(a.body, &p)
	if len(p.Errors) != 2 || p.Next != "c2" {
		t.Errorf("page %+v", p)
	}

	a = h.get("/v1/errors?agent=alpha&caller=c1&kind=quota&from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00.5%2B01:00&limit=500&cursor=c2")
	if a.status != 200 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	want := lookup.ListQuery{Agent: "alpha", Caller: "c1", Kind: "quota", Limit: 500, Cursor: "c2",
		From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 1, 23, 0, 0, 5e8, time.UTC)}
	if got := h.svc.gotList; !reflect.DeepEqual(got, want) {
		t.Errorf("query\n got %+v\nwant %+v", got, want)
	}

	h.svc.list = func(context.Context, lookup.ListQuery) (*lookup.Page, error) { return &lookup.Page{}, nil }
	a = h.get("/v1/errors?from=2026-03-04T11:00:00Z") // to defaults to now
	if a.status != 200 || !strings.Contains(string(a.body), `"errors":[]`) {
		t.Errorf("empty page: %d %s", a.status, a.body)
	}
	if got := h.svc.gotList; !got.To.Equal(now) || !got.From.Equal(t0.Add(-time.Hour)) {
		t.Errorf("from only: %+v", got)
	}
}

// TestUnitBadParameters: bad values, unknown and repeated parameters are
// refused with 400 before the service is asked, naming only the route's
// own parameter.
func TestUnitBadParameters(t *testing.T) {
	for _, c := range []struct {
		target, code, param string
	}{
		{"/v1/errors?limit=0", "invalid-parameter", "limit"},
		{"/v1/errors?limit=501", "invalid-parameter", "limit"},
		{"/v1/errors?limit=ten", "invalid-parameter", "limit"},
		{"/v1/errors?kind=bogus", "invalid-parameter", "kind"},
		{"/v1/errors?from=yesterday", "invalid-parameter", "from"},
		{"/v1/errors?to=2026-03-04", "invalid-parameter", "to"},
		{"/v1/errors?agent=a%00b", "invalid-parameter", "agent"},
		{"/v1/errors?caller=" + strings.Repeat("x", maxValueLen+1), "invalid-parameter", "caller"},
		{"/v1/errors?cursor=%FF", "invalid-parameter", "cursor"},
		{"/v1/errors?from=2026-03-04T12:00:00Z&to=2026-03-04T11:00:00Z", "invalid-range", ""},
		{"/v1/errors?from=2026-03-04T12:00:00Z&to=2026-03-04T12:00:00Z", "invalid-range", ""},
		{"/v1/errors?from=2026-02-01T00:00:00Z&to=2026-03-01T00:00:00Z", "invalid-range", ""},
		{"/v1/errors?agnet=alpha", "unknown-parameter", ""},
		{"/v1/errors?agent=a&agent=b", "repeated-parameter", "agent"},
		{"/v1/errors?a=%zz", "bad-query", ""},
		{"/v1/errors?a=1;b=2", "bad-query", ""},
		{"/v1/errors/x?kind=quota", "unknown-parameter", ""},
		{"/v1/errors/x?agent=%01", "invalid-parameter", "agent"},
		{"/v1/errors/x?event_id=%7F", "invalid-parameter", "event_id"},
		{"/v1/agents/a%0Ab/report", "invalid-parameter", "agent"},
		{"/v1/report?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z", "invalid-range", ""},
		{"/v1/report?from=1960-01-01T00:00:00Z&to=1960-01-02T00:00:00Z", "invalid-parameter", "from"},
		{"/v1/report?to=1900-01-02T00:00:00Z", "invalid-parameter", "to"},
		{"/v1/report?to=1970-01-01T01:00:00Z", "invalid-range", ""}, // the default from is before 1970
		{"/v1/errors?from=1969-12-31T23:59:59Z&to=1970-01-01T01:00:00Z", "invalid-parameter", "from"},
		{"/v1/errors?to=2106-02-08T00:00:00Z", "invalid-parameter", "to"},
		{"/v1/errors?to=9999-12-31T23:59:59Z&cursor=abc", "invalid-parameter", "to"},
		{"/v1/errors?agent=" + strings.Repeat("a", 300), "invalid-parameter", "agent"},
		{"/v1/errors?caller=a%E2%80%A8b", "invalid-parameter", "caller"},
		{"/v1/errors?cursor=" + strings.Repeat("c", 1025), "invalid-parameter", "cursor"},
		{"/v1/errors/x?agent=" + strings.Repeat("a", 300), "invalid-parameter", "agent"},
		{"/v1/agents/" + strings.Repeat("a", 300) + "/report", "invalid-parameter", "agent"},
		{"/v1/report?limit=1", "unknown-parameter", ""},
		{"/healthz?verbose=1", "unknown-parameter", ""},
	} {
		h := newHarness(t, nil)
		a := h.get(c.target)
		var p problem
		_ = json.Unmarshal(a.body, &p)
		if a.status != 400 || p.Code != c.code || p.Parameter != c.param {
			t.Errorf("%s: got %d %q parameter %q; want 400 %q %q", c.target, a.status, p.Code, p.Parameter, c.code, c.param)
		}
		if h.svc.calls+h.rep.calls != 0 {
			t.Errorf("%s: the store was asked", c.target)
		}
	}
}

// TestUnitReport: both report routes, the default range of 24 hours, and
// the reporter's errors.
func TestUnitReport(t *testing.T) {
	h := newHarness(t, nil)
	now := h.clock.Now()
	a := h.get("/v1/agents/alpha%20one/report")
	if a.status != 200 || h.rep.gotAgent != "alpha one" || !h.rep.gotTo.Equal(now) || !h.rep.gotFrom.Equal(now.Add(-24*time.Hour)) {
		t.Errorf("%d agent %q [%v, %v): %s", a.status, h.rep.gotAgent, h.rep.gotFrom, h.rep.gotTo, a.body)
	}
	a = h.get("/v1/report?from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z")
	var r report.Report
	_ = json.Unmarshal(a.body, &r)
	if a.status != 200 || h.rep.gotAgent != "" || r.Source != "mixed" || len(r.Agents) != 1 {
		t.Errorf("all agents: %d %q %s", a.status, h.rep.gotAgent, a.body)
	}
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{&report.BadRangeError{From: t0, To: t0, Reason: "from must be before to"}, 400, "invalid-range"},
		{&lookup.UnavailableError{Err: errors.New("down")}, 503, "unavailable"},
		{lookup.ErrNotFound, 404, "not-found"},
		{context.DeadlineExceeded, 504, "timeout"},
		{errors.New("bad database name"), 500, "internal"},
	} {
		h.rep.report = func(context.Context, string, time.Time, time.Time) (*report.Report, error) { return nil, c.err }
		for _, target := range []string{"/v1/agents/alpha/report", "/v1/report"} {
			a := h.get(target)
			if a.status != c.status || a.problemCode() != c.code {
				t.Errorf("%s with %v: %d %q; want %d %q", target, c.err, a.status, a.problemCode(), c.status, c.code)
			}
			if strings.Contains(string(a.body), "2026-03-04") {
				t.Errorf("%s: the answer quotes the range: %s", target, a.body)
			}
		}
	}
}

// TestUnitProbes: /healthz always, /readyz as Service.Ready says, neither
// needing a token.
func TestUnitProbes(t *testing.T) {
	t.Setenv("ERRTRAIL_TEST_TOKENS", "tok-1")
	h := newHarness(t, func(c *Config) { c.TokensEnv = "ERRTRAIL_TEST_TOKENS" })
	if a := h.get("/healthz"); a.status != 200 || string(a.body) != "ok\n" {
		t.Errorf("healthz %d %q", a.status, a.body)
	}
	if a := h.get("/readyz"); a.status != 200 {
		t.Errorf("readyz %d %s", a.status, a.body)
	}
	h.svc.ready = func(context.Context) error { return &lookup.UnavailableError{Err: errors.New("no tables")} }
	if a := h.get("/readyz"); a.status != 503 || a.problemCode() != "not-ready" {
		t.Errorf("readyz not ready: %d %s", a.status, a.body)
	}
	if a := h.do(http.MethodHead, "/healthz", nil); a.status != 200 {
		t.Errorf("HEAD healthz %d", a.status)
	}
}

// TestUnitMethods: only GET and HEAD, on every route and on no route.
func TestUnitMethods(t *testing.T) {
	h := newHarness(t, nil)
	for _, rt := range routes {
		path := strings.NewReplacer("{id}", "x", "{agent}", "alpha").Replace(rt.pattern)
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions, "BREW"} {
			a := h.do(m, path, strings.NewReader(""))
			if a.status != 405 || a.header.Get("Allow") != "GET, HEAD" || a.problemCode() != "method-not-allowed" {
				t.Errorf("%s %s: %d Allow %q", m, path, a.status, a.header.Get("Allow"))
			}
		}
		if a := h.do(http.MethodHead, path, nil); a.status != 200 && a.status != 404 {
			t.Errorf("HEAD %s: %d", path, a.status)
		}
	}
	if !strings.Contains(h.logs.String(), `"method":"other"`) {
		t.Errorf("an unknown method is logged as itself: %s", h.logs.String())
	}
	if n := h.svc.calls + h.rep.calls + h.inc.calls + h.grp.calls; n != len(routes)-3 {
		t.Errorf("the store was asked %d times; want once per HEAD of a /v1 route", n)
	}
}

// TestUnitBodyAndRoutes: a body is refused; paths no route serves are 404
// no-route, without redirects.
func TestUnitBodyAndRoutes(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxBodyBytes = 8 })
	if a := h.do(http.MethodGet, "/v1/errors/x", strings.NewReader("0123456789")); a.status != 413 || a.problemCode() != "body-too-large" {
		t.Errorf("body: %d %s", a.status, a.body)
	}
	for _, p := range []string{"/", "/v1", "/v1/errors/", "/v1/errors/a/b", "/v1//errors", "/v1/errors/x/../y", "/v2/errors", "/v1/agents//report", "/metrics/"} {
		a := h.get(p)
		if a.status != 404 || a.problemCode() != "no-route" || a.header.Get("Location") != "" {
			t.Errorf("%s: %d %q Location %q", p, a.status, a.problemCode(), a.header.Get("Location"))
		}
	}
}

// TestUnitTimeout: a store slower than the request timeout gives 504 (and
// readyz 503) whether or not it heeds its context; the test waits for the
// answer, not for the store.
func TestUnitTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	h := newHarness(t, func(c *Config) { c.RequestTimeout = 20 * time.Millisecond })
	h.svc.story = func(ctx context.Context, _ string, _ lookup.FindOptions) (*lookup.Story, error) {
		<-release // ignores ctx
		return nil, nil
	}
	h.svc.list = func(ctx context.Context, _ lookup.ListQuery) (*lookup.Page, error) {
		<-ctx.Done() // heeds it, as the real store does
		return nil, &lookup.UnavailableError{Err: ctx.Err()}
	}
	h.svc.ready = func(ctx context.Context) error { <-release; return nil }
	h.rep.report = func(ctx context.Context, _ string, _, _ time.Time) (*report.Report, error) {
		<-ctx.Done()
		return nil, errors.New("the driver's own words for it")
	}
	for target, want := range map[string]int{"/v1/errors/x": 504, "/v1/errors": 504, "/v1/report": 504, "/readyz": 503} {
		if a := h.get(target); a.status != want {
			t.Errorf("%s: %d; want %d: %s", target, a.status, want, a.body)
		}
	}
}

// TestUnitClientGone: a client that leaves is recorded as 499, and
// nothing is written.
func TestUnitClientGone(t *testing.T) {
	h := newHarness(t, nil)
	h.svc.story = func(ctx context.Context, _ string, _ lookup.FindOptions) (*lookup.Story, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest(http.MethodGet, "/v1/errors/x", nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	h.s.ServeHTTP(rec, req)
	if rec.Body.Len() != 0 {
		t.Errorf("wrote %q to a client that left", rec.Body.String())
	}
	if m := h.metrics(); !strings.Contains(m, `errtrail_api_requests_total{code="499",route="/v1/errors/{id}"} 1`) {
		t.Errorf("499 not counted:\n%s", grepLines(m, "requests_total"))
	}
}

// TestUnitEveryAnswer makes each route give each status its table row
// lists, and so docs/openapi.yaml (checked by harness.do against the
// document's schema for that route and status). A status added to a row
// without a case here fails.
func TestUnitEveryAnswer(t *testing.T) {
	type setup func(h *harness)
	fail := func(err error) setup {
		return func(h *harness) {
			h.svc.story = func(context.Context, string, lookup.FindOptions) (*lookup.Story, error) { return nil, err }
			h.svc.list = func(context.Context, lookup.ListQuery) (*lookup.Page, error) { return nil, err }
			h.rep.report = func(context.Context, string, time.Time, time.Time) (*report.Report, error) { return nil, err }
			h.svc.ready = func(context.Context) error { return err }
			h.inc.fn = func(context.Context, incidents.Filter) ([]incidents.Incident, error) { return nil, err }
			h.grp.fn = func(context.Context, groups.Filter) ([]groups.Group, error) { return nil, err }
		}
	}
	slow := func(h *harness) {
		wait := func(ctx context.Context) { <-ctx.Done() }
		h.svc.story = func(ctx context.Context, _ string, _ lookup.FindOptions) (*lookup.Story, error) {
			wait(ctx)
			return nil, ctx.Err()
		}
		h.svc.list = func(ctx context.Context, _ lookup.ListQuery) (*lookup.Page, error) { wait(ctx); return nil, ctx.Err() }
		h.inc.fn = func(ctx context.Context, _ incidents.Filter) ([]incidents.Incident, error) {
			wait(ctx)
			return nil, ctx.Err()
		}
		h.rep.report = func(ctx context.Context, _ string, _, _ time.Time) (*report.Report, error) {
			wait(ctx)
			return nil, ctx.Err()
		}
		h.grp.fn = func(ctx context.Context, _ groups.Filter) ([]groups.Group, error) { wait(ctx); return nil, ctx.Err() }
	}
	type tc struct {
		cfg     func(*Config)
		setup   setup
		method  string
		query   string
		headers []string
		body    string
		repeat  int // requests before the one checked
	}
	auth := func(c *Config) { c.TokensEnv = "ERRTRAIL_TEST_TOKENS"; c.MetricsAuth = true }
	cases := map[int]tc{
		200: {},
		300: {setup: fail(&lookup.AmbiguousError{Matches: []lookup.Match{sampleMatch("ev-1")}, Total: 1})},
		400: {query: "?nope=1"},
		401: {cfg: auth},
		404: {setup: fail(lookup.ErrNotFound)},
		405: {method: http.MethodPost},
		413: {body: strings.Repeat("x", 5000)},
		429: {cfg: func(c *Config) { c.RPS, c.Burst = 1, 1 }, repeat: 1},
		500: {setup: fail(errors.New("boom"))},
		503: {setup: fail(&lookup.UnavailableError{Err: errors.New("down")})},
		504: {cfg: func(c *Config) { c.RequestTimeout = 10 * time.Millisecond }, setup: slow},
	}
	t.Setenv("ERRTRAIL_TEST_TOKENS", "tok-1")
	for _, rt := range routes {
		path := strings.NewReplacer("{id}", "x", "{agent}", "alpha").Replace(rt.pattern)
		for _, status := range rt.statuses {
			c, ok := cases[status]
			if !ok {
				t.Errorf("%s: no case for status %d", rt.pattern, status)
				continue
			}
			h := newHarness(t, c.cfg)
			if c.setup != nil {
				c.setup(h)
			}
			m := c.method
			if m == "" {
				m = http.MethodGet
			}
			var a answer
			for range c.repeat + 1 {
				var body *strings.Reader
				if c.body != "" {
					body = strings.NewReader(c.body)
				}
				if body == nil {
					a = h.do(m, path+c.query, nil, c.headers...)
				} else {
					a = h.do(m, path+c.query, body, c.headers...)
				}
			}
			if a.status != status {
				t.Errorf("%s: got %d; want %d: %s", rt.pattern, a.status, status, a.body)
			}
		}
	}
}

// TestUnitHTTPServer: HTTPServer carries the configured timeouts, and a
// real listener serves HEAD without a body.
func TestUnitHTTPServer(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ReadHeaderTimeout = 3 * time.Second; c.IdleTimeout = 7 * time.Second })
	srv := h.s.HTTPServer()
	if srv.ReadHeaderTimeout != 3*time.Second || srv.IdleTimeout != 7*time.Second || srv.WriteTimeout <= h.s.cfg.RequestTimeout ||
		srv.ReadTimeout <= 0 || srv.MaxHeaderBytes != h.s.cfg.MaxHeaderBytes || srv.Handler != h.s || srv.Addr != h.s.cfg.Listen {
		t.Errorf("server %+v", srv)
	}
	url, stop := serveOn(t, srv)
	defer stop()
	resp, err := http.Head(url + "/v1/errors/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength <= 0 {
		t.Errorf("HEAD: %d length %d", resp.StatusCode, resp.ContentLength)
	}
}

// TestUnitConfigValidate: settings that cannot work are refused by New.
func TestUnitConfigValidate(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"write not above request": func(c *Config) { c.WriteTimeout = c.RequestTimeout },
		"zero request timeout":    func(c *Config) { c.RequestTimeout = 0 },
		"burst 0":                 func(c *Config) { c.RPS, c.Burst = 1, 0 },
		"no clients":              func(c *Config) { c.RPS, c.MaxClients = 1, 0 },
		"negative rps":            func(c *Config) { c.RPS = -1 },
		"tiny headers":            func(c *Config) { c.MaxHeaderBytes = 10 },
	} {
		c := DefaultConfig()
		mod(&c)
		if _, err := New(c, &fakeService{}, &fakeReporter{}, newRegistry()); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(DefaultConfig(), &fakeService{}, &fakeReporter{}, newRegistry()); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
