package main

// errtrail serve from outside, as a hostile or careless client: the real
// command (run "serve") on a fresh database of the stack's ClickHouse,
// asked over HTTP. Rows are written straight into landing, the way ingest
// writes them (the materialized views fill errors, error_lookup and the
// rollups), so that a test can keep writing while it reads.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/internal/stackload"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
	"github.com/errtrail/errtrail/schema"
)

// store is a fresh migrated database on the stack's ClickHouse, dropped at
// the test's end.
type store struct {
	addr string
	conn driver.Conn
	opts schema.Options
	seq  atomic.Int64
}

var storeSeq atomic.Int64

func newStore(t *testing.T) *store {
	t.Helper()
	addr := testenv.ClickHouse(t)
	s := &store{addr: addr, conn: stackload.Open(t, addr),
		opts: schema.Options{Database: fmt.Sprintf("errtrail_serve_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6, storeSeq.Add(1))}}
	t.Cleanup(func() {
		if err := s.conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+s.opts.Database); err != nil {
			t.Errorf("drop %s: %v", s.opts.Database, err)
		}
	})
	if _, err := schema.Migrate(context.Background(), s.conn, s.opts); err != nil {
		t.Fatal(err)
	}
	return s
}

// row is one stored error reply.
type row struct {
	eventID, agent, caller, errorID string
	at                              time.Time
}

// write stores rows as one landing batch, as ingest does.
func (s *store) write(ctx context.Context, rows ...row) error {
	b, err := s.conn.PrepareBatch(ctx, schema.LandingInsert(s.opts))
	if err != nil {
		return err
	}
	defer b.Abort()
	none := []string{}
	for _, r := range rows {
		ms := r.at.UnixMilli()
		err := b.Append(uint8(0), r.eventID, time.Unix(ms/1000, 0).UTC(), uint64(ms), time.Now().UTC().Truncate(time.Second),
			"errtrail.replies", int32(0), s.seq.Add(1),
			"agent", "", r.agent, "https://"+r.agent+".example/a2a", r.caller, "SendMessage",
			uint16(1), "", "", "", "", uint64(0),
			"a2a", "http", "rpc_status", uint16(429), "RESOURCE_EXHAUSTED", int32(0),
			"RATE_LIMIT_EXCEEDED", "RATE_LIMIT_EXCEEDED", "agents.example.com", "quota", uint8(1),
			int8(1), "default", int64(1000), "retry_info", "per-caller", "caller",
			r.errorID, "", "Caller exceeded its limit", none, none, []string{"untyped_5xx"}, "", "", "", "",
			"", "", "event", none, uint32(0))
		if err != nil {
			return err
		}
	}
	return b.Send()
}

// server is one errtrail serve the test started.
type server struct {
	base   string
	stderr *syncBuf
	client *http.Client // never follows a redirect
}

// serve starts errtrail serve on the store with args added, waits until
// it answers /healthz and stops it at the test's end (it must exit 0).
func (s *store) serve(t *testing.T, args ...string) *server {
	t.Helper()
	addr := stackload.ClosedPort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	srv := &server{base: "http://" + addr, stderr: &syncBuf{},
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	base := append([]string{"serve", "--clickhouse.addr", s.addr, "--clickhouse.database", s.opts.Database, "--http.listen-address", addr}, serveHangGuard...)
	go func() { done <- run(ctx, append(base, args...), io.Discard, srv.stderr) }() // args win over the hang guard
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve exited %d: %s", code, srv.stderr.String())
		}
	})
	for i := 0; ; i++ {
		resp, err := http.Get(srv.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, srv.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return srv
}

// answer is one HTTP answer.
type answer struct {
	status int
	header http.Header
	body   string
}

func (a answer) problem(t *testing.T) (code, param string) {
	t.Helper()
	if ct := a.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("a %d answer of type %q; want application/problem+json: %.200s", a.status, ct, a.body)
	}
	var p struct{ Code, Parameter string }
	if err := json.Unmarshal([]byte(a.body), &p); err != nil {
		t.Errorf("not a problem: %v: %.200s", err, a.body)
	}
	return p.Code, p.Parameter
}

func (srv *server) get(t *testing.T, path string, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := srv.client.Do(req)
	if err != nil { // not Fatal: goroutines ask too
		t.Errorf("GET %.100s: %v", path, err)
		return answer{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// listPage is the API's Page as a client reads it.
type listPage struct {
	Errors   []lookup.Match `json:"errors"`
	Next     string         `json:"next"`
	From, To time.Time
}

// TestServePagingWhileWriting (issue 23, defect 1): following next from
// the first page of a list on the default range (to = now) walks every
// page, through the API and through the pages' Next link, while rows are
// being written: no 500, each row once, every row stored before the first
// page listed, none newer than the range the first page fixed; a cursor
// given with another agent or another explicit range, or a forged one, is
// a 400 naming the cursor.
func TestServePagingWhileWriting(t *testing.T) {
	s := newStore(t)
	now := time.Now()
	var before []row
	for i := range 25 {
		before = append(before, row{eventID: fmt.Sprintf("ev-pre-%02d", i), agent: "pager", caller: "c1",
			at: now.Add(-time.Duration(i+1) * 7 * time.Second)})
	}
	// Two rows in the same millisecond: the position is (ms, event_id).
	before = append(before, row{eventID: "ev-pre-same-a", agent: "pager", caller: "c1", at: now.Add(-30 * time.Second)},
		row{eventID: "ev-pre-same-b", agent: "pager", caller: "c1", at: now.Add(-30 * time.Second)},
		row{eventID: "ev-other-agent", agent: "other", caller: "c1", at: now.Add(-20 * time.Second)})
	if err := s.write(context.Background(), before...); err != nil {
		t.Fatal(err)
	}
	srv := s.serve(t, "--ratelimit.rps", "0") // the walk asks faster than a person

	// A writer keeps storing rows of the agent at the moment of writing.
	wctx, stopWriter := context.WithCancel(context.Background())
	var written sync.Map // event_id → time the write returned
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; wctx.Err() == nil; i++ {
			r := row{eventID: fmt.Sprintf("ev-live-%04d", i), agent: "pager", caller: "c1", at: time.Now()}
			if err := s.write(wctx, r); err != nil {
				return
			}
			written.Store(r.eventID, time.Now())
			time.Sleep(5 * time.Millisecond)
		}
	}()
	defer func() { stopWriter(); wg.Wait() }()
	// Let the writer store some rows before the walk starts.
	for n := 0; n < 3; {
		n = 0
		written.Range(func(any, any) bool { n++; return true })
		time.Sleep(10 * time.Millisecond)
	}

	// walk follows pages from first and returns the event ids in order.
	type seen struct {
		ids      []string
		from, to time.Time
	}
	var p listPage // the first page of the API walk
	walkAPI := func(first string) (seen, time.Time) {
		t.Helper()
		var out seen
		started := time.Now()
		path := first
		for pages := 0; ; pages++ {
			a := srv.get(t, path)
			if a.status != http.StatusOK {
				t.Fatalf("page %d (%s): %d %s", pages, path, a.status, a.body)
			}
			var pg listPage
			if err := json.Unmarshal([]byte(a.body), &pg); err != nil {
				t.Fatal(err)
			}
			if pages == 0 {
				out.from, out.to, p = pg.From, pg.To, pg
			} else if !pg.From.Equal(out.from) || !pg.To.Equal(out.to) {
				t.Errorf("page %d covers [%v, %v); the first page fixed [%v, %v)", pages, pg.From, pg.To, out.from, out.to)
			}
			for _, m := range pg.Errors {
				out.ids = append(out.ids, m.EventID)
				if m.ObservedAt.Before(out.from) || !m.ObservedAt.Before(out.to) {
					t.Errorf("%s observed at %v, outside the range [%v, %v) the first page fixed", m.EventID, m.ObservedAt, out.from, out.to)
				}
			}
			if pg.Next == "" {
				break
			}
			if pages > 200 {
				t.Fatal("no end")
			}
			path = "/v1/errors?agent=pager&limit=2&cursor=" + url.QueryEscape(pg.Next)
			time.Sleep(2 * time.Millisecond) // "now" moves between pages
		}
		return out, started
	}
	check := func(how string, ids []string, started time.Time) {
		t.Helper()
		once := map[string]bool{}
		for _, id := range ids {
			if once[id] {
				t.Errorf("%s: %s listed twice", how, id)
			}
			once[id] = true
			if id == "ev-other-agent" {
				t.Errorf("%s: another agent's row listed", how)
			}
		}
		for _, r := range before {
			if r.agent == "pager" && !once[r.eventID] {
				t.Errorf("%s: %s (stored before the walk) missing", how, r.eventID)
			}
		}
		live := 0
		written.Range(func(k, v any) bool {
			if v.(time.Time).Before(started) && !once[k.(string)] {
				t.Errorf("%s: %s (stored before the first page) missing", how, k)
			}
			if once[k.(string)] {
				live++
			}
			return true
		})
		if live == 0 {
			t.Errorf("%s: none of the rows written meanwhile was listed", how)
		}
		t.Logf("%s: %d rows, %d of them written during the test", how, len(ids), live)
	}

	api, started := walkAPI("/v1/errors?agent=pager&limit=2")
	check("API", api.ids, started)
	if api.to.Before(started.Add(-time.Second)) || api.to.Sub(api.from) != time.Hour {
		t.Errorf("the range [%v, %v) is not the hour before the first page", api.from, api.to)
	}
	cur := url.QueryEscape(p.Next)
	// The cursor with the range it holds, given explicitly, walks on.
	if a := srv.get(t, "/v1/errors?agent=pager&limit=500&cursor="+cur+"&to="+url.QueryEscape(p.To.Format(time.RFC3339Nano))); a.status != 200 {
		t.Errorf("the cursor with its own to: %d %s", a.status, a.body)
	}

	// The pages' Next link.
	nextRE := regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
	eventRE := regexp.MustCompile(`href="[^"]*/errors\?event_id=([^&"]+)&amp;id=`)
	var pageIDs []string
	pageStart := time.Now()
	path := "/errors?agent=pager&limit=2"
	for pages := 0; ; pages++ {
		a := srv.get(t, path)
		if a.status != http.StatusOK {
			t.Fatalf("web page %d: %d %.300s", pages, a.status, a.body)
		}
		for _, m := range eventRE.FindAllStringSubmatch(a.body, -1) {
			id, _ := url.QueryUnescape(m[1])
			pageIDs = append(pageIDs, id)
		}
		m := nextRE.FindStringSubmatch(a.body)
		if m == nil {
			break
		}
		if pages > 200 {
			t.Fatal("no end")
		}
		next, err := url.Parse(html.UnescapeString(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		path = next.RequestURI()
		time.Sleep(2 * time.Millisecond)
	}
	check("pages", pageIDs, pageStart)

	// A cursor is this list's only.
	for name, q := range map[string]string{
		"another agent": "agent=other&cursor=" + cur,
		"no agent":      "cursor=" + cur,
		"another to":    "agent=pager&cursor=" + cur + "&to=" + url.QueryEscape(p.To.Add(time.Second).Format(time.RFC3339Nano)),
		"another from":  "agent=pager&cursor=" + cur + "&from=" + url.QueryEscape(p.From.Add(-time.Second).Format(time.RFC3339Nano)),
		"forged":        "agent=pager&cursor=" + url.QueryEscape(forge(p.Next)),
		"garbage":       "agent=pager&cursor=not-a-cursor",
	} {
		a := srv.get(t, "/v1/errors?"+q)
		if code, param := a.problem(t); a.status != 400 || code != "invalid-parameter" || param != "cursor" {
			t.Errorf("%s: %d %s %q; want 400 invalid-parameter cursor", name, a.status, code, param)
		}
	}
	if strings.Contains(srv.stderr.String(), "level=ERROR") || strings.Contains(srv.stderr.String(), "level=WARN") {
		t.Errorf("the walk logged a warning or an error:\n%s", srv.stderr.String())
	}
}

// forge moves the range a cursor holds a day back and re-encodes it with
// a checksum of the kind the first cursors carried (SHA-256 of the body):
// a client that knows the format must still not get another query.
func forge(c string) string {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 20 {
		return c + "x"
	}
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(string(b[:len(b)-16])))
	d.UseNumber()
	if d.Decode(&m) != nil {
		return c + "x"
	}
	for _, k := range []string{"f", "u"} {
		n, _ := m[k].(json.Number).Int64()
		m[k] = n - 24*3600*1000
	}
	body, _ := json.Marshal(m)
	sum := sha256.Sum256(body)
	return base64.RawURLEncoding.EncodeToString(append(body, sum[:16]...))
}

// TestServeBadInput (issue 23, defect 2): every bad parameter is a 400
// problem naming it (the pages: a 400 page), never a 500, and nothing is
// logged above INFO.
func TestServeBadInput(t *testing.T) {
	s := newStore(t)
	if err := s.write(context.Background(), row{eventID: "ev-1", agent: "known", caller: "c1", errorID: "err_known_1", at: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	srv := s.serve(t, "--ratelimit.rps", "0")
	long := strings.Repeat("a", 300)
	for _, c := range []struct{ path, param string }{
		{"/v1/errors?cursor=garbage", "cursor"},
		{"/v1/errors?cursor=" + strings.Repeat("Q", 1500), "cursor"},
		{"/v1/errors?from=1900-01-01T00:00:00Z&to=1900-01-02T00:00:00Z", "from"},
		{"/v1/errors?to=2200-01-01T00:00:00Z", "to"},
		{"/v1/errors?from=2106-02-07T06:28:16Z&to=2106-02-07T07:00:00Z", "from"},
		{"/v1/errors?agent=" + long, "agent"},
		{"/v1/errors?caller=" + long, "caller"},
		{"/v1/errors?kind=bogus", "kind"},
		{"/v1/errors/err_known_1?agent=" + long, "agent"},
		{"/v1/agents/" + long + "/report", "agent"},
		{"/v1/report?from=1900-01-01T00:00:00Z&to=1900-01-02T00:00:00Z", "from"},
		{"/v1/agents/known/report?to=1900-01-02T00:00:00Z", "to"},
		{"/v1/agents/known/report?from=2106-03-01T00:00:00Z&to=2106-03-02T00:00:00Z", "from"},
	} {
		a := srv.get(t, c.path)
		code, param := a.problem(t)
		if a.status != 400 || param != c.param {
			t.Errorf("%.80s: %d %s parameter %q; want 400 naming %q", c.path, a.status, code, param, c.param)
		}
	}
	for _, path := range []string{"/errors?kind=bogus", "/errors?cursor=garbage", "/errors?agent=" + long,
		"/errors?from=1900-01-01&to=1900-01-02", "/report?from=1900-01-01&to=1900-01-02",
		"/agents/known/report?to=1900-01-02T00:00:00Z"} {
		if a := srv.get(t, path); a.status != 400 || !strings.HasPrefix(a.header.Get("Content-Type"), "text/html") {
			t.Errorf("page %.80s: %d %s; want a 400 page", path, a.status, a.header.Get("Content-Type"))
		}
	}
	logs := srv.stderr.String()
	if strings.Contains(logs, "level=ERROR") || strings.Contains(logs, "level=WARN") {
		t.Errorf("bad input was logged above INFO:\n%s", logs)
	}
	if strings.Contains(logs, long) || strings.Contains(logs, "garbage") {
		t.Error("a value of the query reached the log")
	}
}

// TestServeNoRedirects (issue 23, defect 4): a path starting with // (or
// otherwise not canonical) is a 404 without Location, and the answer does
// not carry the id of the path.
func TestServeNoRedirects(t *testing.T) {
	s := newStore(t)
	srv := s.serve(t)
	for _, path := range []string{"//v1/errors/planted-id-4711", "//errors/planted-id-4711", "/v1//errors/planted-id-4711",
		"/agents/planted-id-4711//report", "/x/../v1/errors/planted-id-4711", "/./errors?id=planted-id-4711", "/static"} {
		a := srv.get(t, path)
		if a.status != http.StatusNotFound || a.header.Get("Location") != "" {
			t.Errorf("%s: %d, Location %q; want 404 and no Location", path, a.status, a.header.Get("Location"))
		}
		if strings.Contains(a.body, "planted-id-4711") || strings.Contains(fmt.Sprint(a.header), "planted-id-4711") {
			t.Errorf("%s: the answer repeats the id", path)
		}
	}
	if strings.Contains(srv.stderr.String(), "planted-id-4711") {
		t.Error("the id reached the log")
	}
}

// TestServeUnknownAgent (issue 23, defect 5): the report of an agent
// errtrail never stored a reply of is a 404 that does not repeat the name,
// on the API and the page; a known agent with an empty range is a report
// of 0 replies.
func TestServeUnknownAgent(t *testing.T) {
	s := newStore(t)
	if err := s.write(context.Background(), row{eventID: "ev-1", agent: "known-agent", caller: "c1", at: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	srv := s.serve(t)
	a := srv.get(t, "/v1/agents/planted-agent-0815/report")
	if code, _ := a.problem(t); a.status != 404 || code != "unknown-agent" || strings.Contains(a.body, "planted-agent-0815") {
		t.Errorf("unknown agent: %d %s %s; want 404 unknown-agent without the name", a.status, code, a.body)
	}
	if a := srv.get(t, "/agents/planted-agent-0815/report"); a.status != 404 || strings.Contains(a.body, "planted-agent-0815") {
		t.Errorf("unknown agent's page: %d; want 404 without the name", a.status)
	}
	a = srv.get(t, "/v1/agents/known-agent/report?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z")
	var r report.Report
	if a.status != 200 || json.Unmarshal([]byte(a.body), &r) != nil || r.Replies != 0 || r.Agent != "known-agent" {
		t.Errorf("known agent, empty range: %d %s; want 200 with 0 replies", a.status, a.body)
	}
	if a := srv.get(t, "/v1/agents/known-agent/report"); a.status != 200 || !strings.Contains(a.body, `"replies":1`) {
		t.Errorf("known agent: %d %s", a.status, a.body)
	}
}

// holdProxy forwards TCP connections to upstream once released: until
// then a connection is accepted and its bytes wait. It stands for a
// ClickHouse that is slow to answer reports, deterministically.
type holdProxy struct {
	ln       net.Listener
	upstream string
	release  chan struct{}
	wg       sync.WaitGroup
}

func newHoldProxy(t *testing.T, upstream string) *holdProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &holdProxy{ln: ln, upstream: upstream, release: make(chan struct{})}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				defer c.Close()
				<-p.release
				u, err := net.Dial("tcp", upstream)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { _, _ = io.Copy(u, c); u.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(c, u)
			}()
		}
	}()
	t.Cleanup(func() {
		p.Release()
		ln.Close()
	})
	return p
}

func (p *holdProxy) Addr() string { return p.ln.Addr().String() }

var releaseOnce sync.Map

func (p *holdProxy) Release() {
	if _, done := releaseOnce.LoadOrStore(p, true); !done {
		close(p.release)
	}
}

// metric reads one sample of /metrics ("" when absent).
func (srv *server) metric(t *testing.T, series string) string {
	t.Helper()
	a := srv.get(t, "/metrics")
	for _, line := range strings.Split(a.body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// TestServeReportsDoNotStarveLookups (issue 23, defect 3): while one
// client's reports hold every report slot (their ClickHouse does not
// answer), its further reports are refused at once with 429 and another
// client's report waits the queue deadline and gets 503, both with
// Retry-After; meanwhile another client's lookups, lists, pages and
// /readyz all answer 200, before any held report has answered. Released,
// the held reports answer 200 and reports are served again.
func TestServeReportsDoNotStarveLookups(t *testing.T) {
	s := newStore(t)
	now := time.Now()
	var rows []row
	for i := range 40 {
		rows = append(rows, row{eventID: fmt.Sprintf("ev-%02d", i), agent: "busy-agent", caller: "c" + strconv.Itoa(i%3),
			errorID: fmt.Sprintf("err_busy_%02d", i), at: now.Add(-time.Duration(i) * time.Minute)})
	}
	if err := s.write(context.Background(), rows...); err != nil {
		t.Fatal(err)
	}
	hold := newHoldProxy(t, s.addr)
	t.Setenv("ERRTRAIL_TEST_SERVE_TOKENS", "tok-a tok-b tok-c")
	srv := s.serve(t, "--auth.tokens-env", "ERRTRAIL_TEST_SERVE_TOKENS", "--web.without-auth",
		// The proxy holds the protocol's hello too: a dial timeout longer
		// than the test keeps a held report held on a slow machine.
		"--clickhouse.report-addr", hold.Addr(), "--clickhouse.report-conns", "2", "--clickhouse.dial-timeout", "10m",
		"--limits.lookups.per-client", "16", "--limits.lists.per-client", "16",
		"--limits.reports.concurrency", "2", "--limits.reports.per-client", "2", "--limits.reports.queue-length", "4",
		"--limits.queue-timeout", "300ms", "--ratelimit.rps", "0",
		"--request.timeout", "10m", "--http.write-timeout", "11m", "--query.timeout", "10m")
	a, b, c := []string{"Authorization", "Bearer tok-a"}, []string{"Authorization", "Bearer tok-b"}, []string{"Authorization", "Bearer tok-c"}
	month := "?from=" + url.QueryEscape(now.Add(-30*24*time.Hour).Format(time.RFC3339)) + "&to=" + url.QueryEscape(now.Format(time.RFC3339))

	// Client A takes both report slots; its reports hang in ClickHouse.
	held := make(chan answer, 2)
	for range 2 {
		go func() { held <- srv.get(t, "/v1/agents/busy-agent/report"+month, a...) }()
	}
	for srv.metric(t, `errtrail_api_store_questions_running{class="reports"}`) != "2" {
		time.Sleep(10 * time.Millisecond)
	}

	// A's burst beyond its share: 429 at once.
	var wg sync.WaitGroup
	burst := make(chan answer, 20)
	for range 20 {
		wg.Add(1)
		go func() { defer wg.Done(); burst <- srv.get(t, "/v1/report"+month, a...) }()
	}
	wg.Wait()
	close(burst)
	for r := range burst {
		if code, _ := r.problem(t); r.status != 429 || code != "too-many-concurrent" || r.header.Get("Retry-After") == "" {
			t.Errorf("A's report over its share: %d %s Retry-After %q; want 429 too-many-concurrent with Retry-After", r.status, code, r.header.Get("Retry-After"))
		}
	}
	// C's report finds no slot within the queue deadline: 503.
	r := srv.get(t, "/v1/agents/busy-agent/report"+month, c...)
	if code, _ := r.problem(t); r.status != 503 || code != "busy" || r.header.Get("Retry-After") == "" {
		t.Errorf("C's report while the slots are held: %d %s; want 503 busy with Retry-After", r.status, code)
	}
	// The same through the pages (a browser's address is its client).
	if r := srv.get(t, "/agents/busy-agent/report"); r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Errorf("a report page while the slots are held: %d; want 503 with Retry-After", r.status)
	}

	// B's lookups, lists, pages and the probe answer meanwhile.
	lookups := make(chan answer, 64)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 3 {
				id := rows[4*j+i].errorID
				lookups <- srv.get(t, "/v1/errors/"+id, b...)
				lookups <- srv.get(t, "/v1/errors?agent=busy-agent&limit=5", b...)
				if i == 0 { // a probe asks alone (its pool has 2 connections)
					lookups <- srv.get(t, "/readyz")
				}
				lookups <- srv.get(t, "/errors?id="+id)
			}
		}()
	}
	wg.Wait()
	close(lookups)
	n := 0
	for r := range lookups {
		n++
		if r.status != 200 {
			t.Errorf("a lookup while reports are held: %d %.200s", r.status, r.body)
		}
	}
	select {
	case r := <-held:
		t.Fatalf("a held report answered before the release: %d %.200s", r.status, r.body)
	default:
	}
	t.Logf("%d lookups, lists, pages and probes answered 200 while 2 reports were held", n)

	hold.Release()
	for range 2 {
		if r := <-held; r.status != 200 || !strings.Contains(r.body, `"agent":"busy-agent"`) {
			t.Errorf("a held report after the release: %d %.200s", r.status, r.body)
		}
	}
	if r := srv.get(t, "/v1/agents/busy-agent/report"+month, c...); r.status != 200 {
		t.Errorf("a report once the slots are free: %d %.200s", r.status, r.body)
	}
	if v := srv.metric(t, `errtrail_api_store_questions_refused_total{class="reports",reason="client"}`); v != "20" {
		t.Errorf("refused for the client's share: %q; want 20", v)
	}
}
