package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/dashboards"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// The id a customer quoted in these tests. It must appear in a page only as
// the value of the lookup form's input field.
const typedID = "dana.kowalski@customer.example"

var now = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

type rig struct {
	h   http.Handler
	svc *fakeService
	rep *fakeReporter
	log *bytes.Buffer
}

func newRig(cfg Config) *rig {
	r := &rig{svc: &fakeService{story: sampleStory(), page: &lookup.Page{}}, rep: &fakeReporter{rep: sampleReport()}, log: &bytes.Buffer{}}
	cfg.Logger = slog.New(slog.NewTextHandler(r.log, nil))
	cfg.Now = func() time.Time { return now }
	r.h = New(cfg, r.svc, r.rep)
	return r
}

func (r *rig) get(t *testing.T, target string) (*http.Response, string) {
	t.Helper()
	return r.do(t, http.MethodGet, target)
}

func (r *rig) do(t *testing.T, method, target string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	r.h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	res := rec.Result()
	return res, rec.Body.String()
}

func storyPath(id string, extra ...string) string {
	v := url.Values{"id": {id}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return "/errors?" + v.Encode()
}

func wantStatus(t *testing.T, res *http.Response, want int, body string) {
	t.Helper()
	if res.StatusCode != want {
		t.Fatalf("status %d; want %d\n%s", res.StatusCode, want, body)
	}
}

func wantText(t *testing.T, body string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	if t.Failed() {
		t.Logf("page:\n%s", body)
	}
}

func wantNoText(t *testing.T, body string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(body, s) {
			t.Errorf("page contains %q; it must not", s)
		}
	}
}

// wantIDOnlyInInput checks that the typed id (as html/template escapes it
// in an attribute) occurs exactly once, as the id field's value, and
// nowhere else: not in the title, the text, a link or a hidden field.
func wantIDOnlyInInput(t *testing.T, body, id string) {
	t.Helper()
	field := `name="id" type="text" value="` + attrEscape(id) + `"`
	if n := strings.Count(body, field); n != 1 {
		t.Errorf("the id field holds the typed id %d times; want once", n)
	}
	rest := strings.Replace(body, field, "", 1)
	for _, form := range []string{id, attrEscape(id), url.QueryEscape(id), url.PathEscape(id)} {
		if strings.Contains(rest, form) {
			t.Errorf("the typed id appears outside the input field (as %q)", form)
		}
	}
}

// attrEscape is how html/template writes s in a quoted attribute, for the
// characters the tests' ids use.
func attrEscape(s string) string {
	r := strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;", `'`, "&#39;", `+`, "&#43;")
	return r.Replace(s)
}

func TestUnitHome(t *testing.T) {
	r := newRig(Config{})
	res, body := r.get(t, "/")
	wantStatus(t, res, http.StatusOK, body)
	wantText(t, body,
		`<h1>Look up an error reply</h1>`,
		`<main id="main">`, `<header class="site">`, `<nav aria-label="Site">`, `<footer class="site">`,
		`<form class="lookup" action="/errors" method="get" role="search"`,
		`<label for="id">Id from the ticket</label>`, `<input id="id" name="id" type="text" value=""`, `autofocus`,
		`<label for="agent">Agent`, `<input id="agent" name="agent"`,
		`<button type="submit">Look up</button>`,
		`<link rel="stylesheet" href="/static/style.css">`,
	)
	wantNoText(t, body, "<script", "http://", "https://")
	if r.svc.calls != 0 {
		t.Errorf("the start page asked the service %d times", r.svc.calls)
	}
}

// TestUnitHeaders: every answer, page, error page and stylesheet, carries
// the security and caching headers.
func TestUnitHeaders(t *testing.T) {
	r := newRig(Config{})
	r.svc.storyErr = lookup.ErrNotFound
	for _, target := range []string{"/", storyPath("x-1"), "/errors", "/report", "/agents/a/report", "/static/style.css", "/no/such/page"} {
		res, _ := r.get(t, target)
		h := res.Header
		if got := h.Get("Content-Security-Policy"); !strings.HasPrefix(got, "default-src 'self'") || strings.Contains(got, "unsafe") {
			t.Errorf("%s: Content-Security-Policy %q", target, got)
		}
		for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"} {
			if got := h.Get(k); got != want {
				t.Errorf("%s: %s %q; want %q", target, k, got, want)
			}
		}
		wantCT := "text/html; charset=utf-8"
		if strings.HasSuffix(target, ".css") {
			wantCT = "text/css; charset=utf-8"
		}
		if got := h.Get("Content-Type"); got != wantCT {
			t.Errorf("%s: Content-Type %q; want %q", target, got, wantCT)
		}
	}
	res, body := r.get(t, "/static/style.css")
	wantStatus(t, res, http.StatusOK, body)
	if !strings.Contains(body, "font") || strings.Contains(body, "url(") || strings.Contains(body, "@import") {
		t.Errorf("the stylesheet must be local and load nothing: %.200s", body)
	}
}

func TestUnitStory(t *testing.T) {
	r := newRig(Config{GrafanaURL: "https://grafana.example/"})
	res, body := r.get(t, storyPath("  "+typedID+" ", "agent", "research-agent"))
	wantStatus(t, res, http.StatusOK, body)
	if r.svc.gotID != typedID || r.svc.gotOpt.Agent != "research-agent" || r.svc.gotOpt.EventID != "" {
		t.Errorf("Story(%q, %+v); want the trimmed id and the agent", r.svc.gotID, r.svc.gotOpt)
	}
	wantText(t, body,
		// meaning
		`<title>orchestrator-7 went over its SendMessage limit on research-agent. · errtrail</title>`,
		`<h1 id="headline">orchestrator-7 went over its SendMessage limit on research-agent.</h1>`,
		`Found by its <code>error_id</code>`, `Kind <strong class="kind">quota</strong>`,
		`<a href="/agents/research-agent/groups?group=fedcba9876543210">Its error group <code>fedcba9876543210</code>`,
		`<li>Only this caller is affected; the agent serves everyone else.</li>`,
		`Wait the delay the reply gives, then retry with the same messageId.`,
		// attempts
		`<h2 id="attempts">Attempts</h2>`, `chained by <code>message_id</code>`,
		`<strong>Retry rules broken:</strong> <code>retry_before_delay</code>`,
		`<tr class="this broke">`, `(this reply)`, `<td>12 s</td>`, `<td>3 s</td>`, `<td>first</td>`,
		`<td>another error reply</td>`, `<td>no further error seen</td>`,
		`<strong class="violation">retry_before_delay</strong>`,
		`2026-11-01 09:30:09.345 UTC`,
		// context
		`<h2 id="context">Context</h2>`, `from 2026-11-01 09:23:00.000 UTC to 2026-11-01 09:38:00.000 UTC`,
		`<th scope="col">overload</th><th scope="col">quota</th>`,
		`<tr><th scope="row">09:29</th><td>1</td><td>0</td></tr>`,
		`<tr class="this"><th scope="row">09:30 <strong class="mark">(this reply)</strong></th><td>0</td><td>20</td></tr>`,
		`<tfoot><tr><th scope="row">Total</th><td>1</td><td>20</td></tr></tfoot>`,
		`<dt>Retry storm</dt><dd><strong>yes</strong>: This caller retries sooner`, `(<span class="reasons"><code>ignored_retry_after</code></span>)`,
		`<dt><code>retry_before_delay</code></dt><dd>The caller retried after 3 s; the reply asked for 12 s. <span class="checks">The rule: Seed 002: &#34;wait the delay&#34;</span></dd>`,
		`<dt>Agent overloaded</dt><dd><strong>no</strong></dd>`,
		`<dt>Caller runaway</dt>`, `<dt>Limit too low</dt>`, `<dt>Undecided</dt>`,
		// findings
		`<th scope="row"><code>retry_after_header_missing</code><br>429 without Retry-After</th><td>Seed 000: &#34;an HTTP 429 MUST include Retry-After&#34;</td><td>Send Retry-After with every 429.</td>`,
		// record
		`<dt>http_status</dt><dd>429</dd>`, `<dt>retry_after_ms</dt><dd>12 s</dd>`, `<dt>jsonrpc_code</dt><dd><span class="none">none</span></dd>`,
		`<li>message.parts[0]: too large</li>`, `<dt>error_id</dt><dd>err-stored-77</dd>`,
		// links
		`<a href="/agents/research-agent/report">Conformance report of research-agent</a>`,
		`<a href="/v1/errors/run7:2s?event_id=run7%3A2s">This record as JSON</a>`,
		`<a href="https://grafana.example/d/errtrail-agent?from=1793524980000`,
		`var-agent=research-agent&amp;var-caller=orchestrator-7`,
		`<a href="/errors?agent=research-agent&amp;caller=orchestrator-7&amp;from=2026-10-31T21%3A30%3A00Z&amp;to=2026-11-01T21%3A30%3A00Z">This caller's recent errors on research-agent</a>`,
	)
	wantIDOnlyInInput(t, body, typedID)
	wantNoText(t, body, "(so far)") // a whole window: every minute had ended

	// Without a Grafana URL there is no dashboard link.
	_, body = newRig(Config{}).get(t, storyPath(typedID))
	wantNoText(t, body, "grafana", "Grafana")
}

// TestUnitStoryRecordHasEveryField: the definition list names every field
// of lookup.Row by its JSON key, so a field added to the contract shows
// up here first.
func TestUnitStoryRecordHasEveryField(t *testing.T) {
	_, body := newRig(Config{}).get(t, storyPath(typedID))
	rt := reflect.TypeFor[lookup.Row]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if !strings.Contains(body, "<dt>"+name+"</dt>") {
			t.Errorf("the record lacks field %s", name)
		}
	}
	if n := len(recordFields(&lookup.Row{})); n != rt.NumField() {
		t.Errorf("recordFields lists %d fields; lookup.Row has %d", n, rt.NumField())
	}
}

// TestUnitStoryToldWhileItsWindowIsOpen: a story told less than 8 minutes
// after its reply ends its context at that moment; the current minute is
// marked as counted so far, the minutes before it are not.
func TestUnitStoryToldWhileItsWindowIsOpen(t *testing.T) {
	r := newRig(Config{})
	s := sampleStory()
	s.Context.To = t0.Add(20 * time.Second) // 09:30:32.345
	r.svc.story = s
	res, body := r.get(t, storyPath(typedID))
	wantStatus(t, res, http.StatusOK, body)
	wantText(t, body,
		`from 2026-11-01 09:23:00.000 UTC to 2026-11-01 09:30:32.345 UTC`,
		`<tr class="this"><th scope="row">09:30 <strong class="mark">(this reply)</strong> <span class="mark">(so far)</span></th><td>0</td><td>20</td></tr>`,
		`<tr><th scope="row">09:29</th><td>1</td><td>0</td></tr>`,
	)
	if n := strings.Count(body, "(so far)"); n != 1 {
		t.Errorf("%d minutes marked so far; want the current one only", n)
	}
}

func TestUnitStoryWithoutAttemptsOrVerdicts(t *testing.T) {
	r := newRig(Config{})
	s := sampleStory()
	s.Attempts = lookup.Attempts{}
	s.Context.Minutes = nil
	s.Context.VerdictError = "dial tcp 10.0.0.1:9000: i/o timeout"
	s.Findings = nil
	s.Meaning.Headline = ""
	r.svc.story = s
	res, body := r.get(t, storyPath(typedID))
	wantStatus(t, res, http.StatusOK, body)
	wantText(t, body,
		`<h1 id="headline">An error reply of research-agent</h1>`,
		`No other reply of the same request was stored: the record carries no message_id`,
		`No errors of this caller on this agent in these minutes.`,
		`The verdicts could not be computed for this moment; the rest of the story holds.`,
		`None: this reply follows every rule errtrail checks.`,
	)
	wantNoText(t, body, "10.0.0.1", "i/o timeout", "<table class=\"attempts\">")
}

func TestUnitNotFound(t *testing.T) {
	r := newRig(Config{})
	r.svc.storyErr = fmt.Errorf("lookup: %w", lookup.ErrNotFound)
	res, body := r.get(t, storyPath(typedID))
	wantStatus(t, res, http.StatusNotFound, body)
	wantText(t, body, `<h1>No error reply found</h1>`, `No stored error reply carries this id.`,
		`<h2 id="searched">What was searched</h2>`,
		`<li><code>error_id</code></li>`, `<li><code>request_id</code></li>`, `<li><code>http_request_id</code></li>`,
		`<li><code>event_id</code></li>`, `<li><code>message_id</code></li>`, `<li><code>task_id</code></li>`,
		`<li><code>jsonrpc_id</code>: not searched, because no agent was given</li>`)
	wantIDOnlyInInput(t, body, typedID)

	_, body = r.get(t, storyPath("7", "agent", "planner-agent"))
	wantText(t, body, `No stored error reply carries this id on the agent given.`, `<li><code>jsonrpc_id</code></li>`,
		`name="agent" type="text" value="planner-agent"`)
}

func TestUnitAmbiguous(t *testing.T) {
	r := newRig(Config{ExternalURL: "https://errtrail.example/ops/"})
	r.svc.storyErr = &lookup.AmbiguousError{Total: 3, Matches: []lookup.Match{
		{EventID: "run7:9", MatchedAs: "task_id", Agent: "research-agent", Caller: "orchestrator-7", Kind: "quota", Code: "RATE_LIMIT_EXCEEDED", ObservedAt: t0},
		{EventID: "run7:8", MatchedAs: "task_id", Agent: "research-agent", Caller: "planner-2", Kind: "overload", ObservedAt: t0.Add(-time.Minute)},
	}}
	res, body := r.get(t, storyPath(typedID))
	wantStatus(t, res, http.StatusMultipleChoices, body)
	wantText(t, body, `<h1>Several error replies match</h1>`, `This id matches 3 stored error replies; the newest 2 are listed.`,
		`<a href="https://errtrail.example/ops/errors?event_id=run7%3A9&amp;id=run7%3A9"><code>run7:9</code></a>`,
		`<a href="https://errtrail.example/ops/errors?event_id=run7%3A8&amp;id=run7%3A8">`,
		`<td><code>task_id</code></td><td>research-agent</td><td>planner-2</td><td>overload</td>`)
	wantIDOnlyInInput(t, body, typedID)
}

func TestUnitBadID(t *testing.T) {
	r := newRig(Config{})
	r.svc.storyErr = &lookup.BadIDError{Reason: "it is longer than 256 bytes"}
	res, body := r.get(t, storyPath(typedID))
	wantStatus(t, res, http.StatusBadRequest, body)
	wantText(t, body, `<h1>Not a usable id</h1>`, `This cannot be an id errtrail stores: it is longer than 256 bytes.`)
	wantIDOnlyInInput(t, body, typedID)

	// An empty id never reaches the service.
	r.svc.calls = 0
	res, body = r.get(t, "/errors?id=+")
	wantStatus(t, res, http.StatusBadRequest, body)
	wantText(t, body, `the id is empty`)
	if r.svc.calls != 0 {
		t.Errorf("an empty id was looked up")
	}
}

func TestUnitUnavailable(t *testing.T) {
	internal := errors.New("dial tcp 127.0.0.1:19000: connect: connection refused")
	for name, err := range map[string]error{
		"unavailable": &lookup.UnavailableError{Err: internal},
		"wrapped":     fmt.Errorf("story: %w", &lookup.UnavailableError{Err: internal}),
		"timeout":     fmt.Errorf("query: %w", context.DeadlineExceeded),
	} {
		t.Run(name, func(t *testing.T) {
			r := newRig(Config{})
			r.svc.storyErr, r.svc.listErr, r.rep.err = err, err, err
			res, body := r.get(t, storyPath(typedID))
			wantStatus(t, res, http.StatusServiceUnavailable, body)
			if res.Header.Get("Retry-After") == "" {
				t.Error("a 503 without Retry-After")
			}
			wantText(t, body, `<h1>Try again in a moment</h1>`, `errtrail cannot reach its error store right now, so the lookup could not be answered.`, `Retry in a minute`)
			wantNoText(t, body, "127.0.0.1", "19000", "refused", "dial", "deadline")
			wantIDOnlyInInput(t, body, typedID)
			for _, target := range []string{"/errors?agent=a", "/agents/a/report", "/report"} {
				res, body := r.get(t, target)
				wantStatus(t, res, http.StatusServiceUnavailable, body)
				wantNoText(t, body, "127.0.0.1", "refused")
			}
			if strings.Contains(r.log.String(), typedID) {
				t.Errorf("the log holds the typed id:\n%s", r.log)
			}
		})
	}
}

// TestUnitFailure: an error the service did not classify is a 500 that
// says nothing about it; the log has it, without the id.
func TestUnitFailure(t *testing.T) {
	r := newRig(Config{})
	r.svc.storyErr = errors.New("code: 60, message: Table errtrail.error_lookup doesn't exist")
	res, body := r.get(t, storyPath(typedID))
	wantStatus(t, res, http.StatusInternalServerError, body)
	wantText(t, body, `<h1>Something went wrong</h1>`)
	wantNoText(t, body, "error_lookup", "60")
	wantIDOnlyInInput(t, body, typedID)
	if log := r.log.String(); !strings.Contains(log, "error_lookup") || strings.Contains(log, typedID) {
		t.Errorf("the log must hold the failure and not the id:\n%s", log)
	}
}

// TestUnitHostileValues: values from rows, from the query and from the
// path are escaped; a <script> in an agent name renders inert.
func TestUnitHostileValues(t *testing.T) {
	const evil = `<script>alert("x")</script>`
	r := newRig(Config{})
	s := sampleStory()
	s.Record.Agent = evil
	s.Record.Caller = `"><img src=x onerror=alert(1)>`
	s.Record.Message = evil
	s.Meaning.Headline = evil
	s.Findings[0].Change = evil
	s.Context.Minutes[0].ByKind[evil] = 1
	r.svc.story = s
	r.svc.page = &lookup.Page{Errors: []lookup.Match{{EventID: evil, Agent: evil, Caller: evil, Kind: evil, ObservedAt: t0}}, Next: evil}
	rep := sampleReport()
	rep.Rules[0].Title, rep.Rules[0].ExampleEventID, rep.Clean = evil, evil, []string{evil}
	rep.Agents = []report.AgentSummary{{Agent: evil, Replies: 3}}
	r.rep.rep = rep

	pages := []string{
		storyPath(`"><script>alert(1)</script>`, "agent", evil),
		"/errors?agent=" + url.QueryEscape(evil) + "&caller=" + url.QueryEscape(evil),
		"/agents/" + url.PathEscape(evil) + "/report",
		"/report",
	}
	for _, target := range pages {
		res, body := r.get(t, target)
		wantStatus(t, res, http.StatusOK, body)
		wantNoText(t, body, "<script", "<img")
		if !strings.Contains(body, "&lt;script&gt;") {
			t.Errorf("%s: the hostile value is not shown escaped", target)
		}
	}
	// In URLs the hostile values are percent-encoded.
	_, body := r.get(t, pages[0])
	wantText(t, body, `/agents/%3Cscript%3Ealert%28%22x%22%29%3C%2Fscript%3E/report`)
}

func TestUnitList(t *testing.T) {
	r := newRig(Config{GrafanaURL: "https://grafana.example"})
	r.svc.page = &lookup.Page{Errors: []lookup.Match{
		{EventID: "run7:2s", ErrorID: "err-stored-77", Agent: "research-agent", Caller: "orchestrator-7", Kind: "quota", Code: "RATE_LIMIT_EXCEEDED", ObservedAt: t0},
		{EventID: "run7:2r", Agent: "research-agent", Caller: "orchestrator-7", Kind: "quota", ObservedAt: t0.Add(-time.Second)},
	}, Next: "c2"}
	res, body := r.get(t, "/errors?agent=research-agent&caller=orchestrator-7&kind=quota")
	wantStatus(t, res, http.StatusOK, body)
	want := lookup.ListQuery{Agent: "research-agent", Caller: "orchestrator-7", Kind: "quota", From: now.Add(-DefaultListRange), To: now}
	if r.svc.gotQ != want {
		t.Errorf("List(%+v); want %+v", r.svc.gotQ, want)
	}
	wantText(t, body, `<h1>Recent errors of a caller on research-agent</h1>`,
		`<a href="/errors?event_id=run7%3A2s&amp;id=run7%3A2s">err-stored-77</a>`,
		`<a href="/errors?event_id=run7%3A2r&amp;id=run7%3A2r">run7:2r</a>`,
		// The cursor carries the range: the link has none (a range to the
		// second would not be the cursor's).
		`<a href="/errors?agent=research-agent&amp;caller=orchestrator-7&amp;cursor=c2&amp;kind=quota" rel="next">Older</a>`,
		`https://grafana.example/d/errtrail-agent?`, `name="caller" type="text" value="orchestrator-7"`)
	wantNoText(t, body, ">Newest<")

	// The next page links back to the newest; the last page has no Older.
	r.svc.page.Next = ""
	_, body = r.get(t, "/errors?agent=research-agent&cursor=c2&from=1793491200000&to=2026-11-01T10:00")
	if q := r.svc.gotQ; q.Cursor != "c2" || !q.From.Equal(time.UnixMilli(1793491200000)) || !q.To.Equal(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("List(%+v): cursor and range not passed on", q)
	}
	wantText(t, body, `>Newest</a>`)
	wantNoText(t, body, `rel="next"`)

	for target, why := range map[string]string{
		"/errors?from=yesterday":                "from: not a time",
		"/errors?from=2026-11-01&to=2026-10-01": "from must be before to",
		"/errors?from=2026-01-01&to=2026-11-01": "the range is longer than",
		"/errors?limit=100000":                  "limit must be",
	} {
		res, body := r.get(t, target)
		wantStatus(t, res, http.StatusBadRequest, body)
		wantText(t, body, why)
	}
}

func TestUnitReport(t *testing.T) {
	r := newRig(Config{ExternalURL: "https://errtrail.example", GrafanaURL: "https://grafana.example"})
	res, body := r.get(t, "/agents/research-agent/report?from=2026-10-30T00:00:00Z&to=2026-11-01T00:00:00Z")
	wantStatus(t, res, http.StatusOK, body)
	if r.rep.gotAgent != "research-agent" || !r.rep.gotFrom.Equal(time.Date(2026, 10, 30, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Report(%q, %v, %v)", r.rep.gotAgent, r.rep.gotFrom, r.rep.gotTo)
	}
	wantText(t, body, `<h1>Conformance report of research-agent</h1>`,
		`1200 error replies from 2026-10-30 00:00:00.000 UTC to 2026-11-01 00:00:00.000 UTC; 1 rules broken, 2 kept.`,
		`<th scope="row"><code>retry_after_header_missing</code><br>429 without Retry-After</th><td>300</td><td>25 %</td>`,
		`<a href="https://errtrail.example/errors?event_id=run7%3A2s&amp;id=run7%3A2s">err-stored-77</a>`,
		`<td>Seed 000: &#34;an HTTP 429 MUST include Retry-After&#34;</td><td>Send Retry-After with every 429.</td>`,
		`<h2 id="clean">Rules kept</h2>`, `Counted from the replies the agent published itself; 1200 copies of the same replies seen by other observers are left out`, `<li><code>retry_delay_zero</code></li>`, `<li><code>errorinfo_missing</code></li>`,
		`<form class="filter" action="https://errtrail.example/agents/research-agent/report" method="get"`,
		`value="2026-10-30T00:00:00Z"`, `https://grafana.example/d/errtrail-agent?from=1793318400000`,
		`<a href="https://errtrail.example/errors?agent=research-agent&amp;from=`,
		`<a href="https://errtrail.example/agents/research-agent/groups?group=0123456789abcdef">its error group</a>`,
		`<a href="https://errtrail.example/agents/research-agent/groups">Error groups of research-agent</a>`)

	// Every agent, by default over the last week.
	rep := sampleReport()
	rep.Rules, rep.Agents = nil, []report.AgentSummary{{Agent: "dealer-agent", Replies: 40, Breaking: 12, Rules: 2, Source: "gateway"}}
	r.rep.rep = rep
	res, body = r.get(t, "/report")
	wantStatus(t, res, http.StatusOK, body)
	if r.rep.gotAgent != "" || !r.rep.gotTo.Equal(now) || !r.rep.gotFrom.Equal(now.Add(-DefaultReportRange)) {
		t.Errorf("Report(%q, %v, %v); want every agent over the last week", r.rep.gotAgent, r.rep.gotFrom, r.rep.gotTo)
	}
	wantText(t, body, `<h1>Conformance report of every agent</h1>`, `None: the agents' error replies keep every rule`,
		`<th scope="row"><a href="https://errtrail.example/agents/dealer-agent/report?from=2026-10-25T12%3A00%3A00Z&amp;to=2026-11-01T12%3A00%3A00Z">dealer-agent</a></th><td>40</td><td>12</td><td>2</td><td>gateway</td>`)

	res, body = r.get(t, "/report?from=2026-01-01T00:00:00Z&to=2026-11-01T00:00:00Z")
	wantStatus(t, res, http.StatusBadRequest, body)
}

func TestUnitDeepLinks(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{StoryURL("https://e.example/ops/", "err 1", lookup.FindOptions{}), "https://e.example/ops/errors?id=err+1"},
		{StoryURL("", "7", lookup.FindOptions{Agent: "planner-agent", EventID: "r:1"}), "/errors?agent=planner-agent&event_id=r%3A1&id=7"},
		{ListURL("https://e.example", lookup.ListQuery{Agent: "research-agent", Caller: "orchestrator-7"}), "https://e.example/errors?agent=research-agent&caller=orchestrator-7"},
		{ListURL("", lookup.ListQuery{}), "/errors"},
		{ReportURL("https://e.example", "a/b", time.Time{}, time.Time{}), "https://e.example/agents/a%2Fb/report"},
		{ReportURL("", "", t0, t0.Add(time.Hour)), "/report?from=2026-11-01T09%3A30%3A12Z&to=2026-11-01T10%3A30%3A12Z"},
	} {
		if c.got != c.want {
			t.Errorf("got %s; want %s", c.got, c.want)
		}
	}
	// A deep link works: an agent with a slash reaches its report.
	r := newRig(Config{})
	res, body := r.get(t, "/agents/a%2Fb/report")
	wantStatus(t, res, http.StatusOK, body)
	if r.rep.gotAgent != "a/b" {
		t.Errorf("agent %q; want a/b", r.rep.gotAgent)
	}
	// The pages' own links carry ExternalURL's path prefix.
	_, body = newRig(Config{ExternalURL: "https://e.example/ops"}).get(t, "/")
	wantText(t, body, `href="https://e.example/ops/static/style.css"`, `action="https://e.example/ops/errors"`)
}

func TestUnitGrafanaUID(t *testing.T) {
	if grafanaAgentUID != dashboards.UIDAgent {
		t.Fatalf("grafanaAgentUID %q; the agent dashboard's uid is %q", grafanaAgentUID, dashboards.UIDAgent)
	}
}

func TestUnitRoutes(t *testing.T) {
	r := newRig(Config{})
	res, body := r.get(t, "/no/such/page")
	wantStatus(t, res, http.StatusNotFound, body)
	wantText(t, body, `<h1>No such page</h1>`)
	res, body = r.do(t, http.MethodPost, "/errors")
	wantStatus(t, res, http.StatusMethodNotAllowed, body)
	if res.Header.Get("Allow") == "" {
		t.Error("405 without Allow")
	}
	res, body = r.do(t, http.MethodHead, "/")
	wantStatus(t, res, http.StatusOK, body)
	if body != "" {
		t.Errorf("HEAD wrote a body")
	}
	// Nil services answer 503, not a panic.
	h := New(Config{Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))}, nil, nil)
	for _, target := range []string{storyPath("x"), "/errors", "/report"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%s with no service: %d; want 503", target, rec.Code)
		}
	}
}

func TestUnitFormat(t *testing.T) {
	for ms, want := range map[int64]string{0: "0 ms", 250: "250 ms", 1000: "1 s", 1500: "1.5 s", 60_000: "1 min", 125_000: "2 min 5 s", 3_600_000: "1 h", 3_780_000: "1 h 3 min"} {
		if got := duration(ms); got != want {
			t.Errorf("duration(%d) = %q; want %q", ms, got, want)
		}
	}
	for share, want := range map[float64]string{0: "0 %", 0.0004: "< 0.1 %", 0.034: "3.4 %", 0.25: "25 %"} {
		if got := percent(share); got != want {
			t.Errorf("percent(%v) = %q; want %q", share, got, want)
		}
	}
}
