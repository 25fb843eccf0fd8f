package lookup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/redact"
)

// TestStoryByEachID: one AAP rate limit over A2A JSON-RPC carries every kind
// of id; each finds the same record and says which column matched. A
// request id that was a customer's e-mail address is stored as its keyed
// hash: the address finds the row through the Finder's Redactor, and
// without the Redactor it finds nothing.
func TestStoryByEachID(t *testing.T) {
	conn, opts := openDB(t)
	at := time.Now().Add(-5 * time.Minute).Truncate(time.Millisecond)
	const email = "dana.kowalski@customer.example"
	store(t, conn, opts, ev{ID: "ev-ids-1", At: at, Agent: "lead-agent", Caller: "buyer-3", Attempt: 1,
		Binding: "jsonrpc", Status: 200, Headers: map[string]string{"X-Request-Id": "req_01HXYREQ"},
		Request: map[string]any{"http_request_id": email, "message_id": "msg-ids-1", "task_id": "task-ids-1", "jsonrpc_id": "7"},
		Body:    aapRateLimited("err_01HZ9RATE01")})
	f := newFinder(conn, opts)
	ctx := context.Background()
	for _, tc := range []struct {
		id, as string
		opt    FindOptions
	}{
		{"err_01HZ9RATE01", "error_id", FindOptions{}},
		{"req_01HXYREQ", "request_id", FindOptions{}},
		{email, "http_request_id", FindOptions{}},
		{"ev-ids-1", "event_id", FindOptions{}},
		{"msg-ids-1", "message_id", FindOptions{}},
		{"task-ids-1", "task_id", FindOptions{}},
		{"7", "jsonrpc_id", FindOptions{Agent: "lead-agent"}},
		{"  err_01HZ9RATE01 ", "error_id", FindOptions{Agent: "lead-agent"}},
	} {
		st, err := f.Story(ctx, tc.id, tc.opt)
		if err != nil {
			t.Errorf("Story(%q): %v", tc.id, err)
			continue
		}
		if st.Record.EventID != "ev-ids-1" || st.MatchedAs != tc.as {
			t.Errorf("Story(%q) = event %s matched as %s; want ev-ids-1 as %s", tc.id, st.Record.EventID, st.MatchedAs, tc.as)
		}
	}
	st, err := f.Story(ctx, "ev-ids-1", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := st.Record
	if r.Kind != "quota" || r.Protocol != "aap" || r.Code != "RATE_LIMITED" || r.RetryAfterMS == nil || *r.RetryAfterMS != 30000 ||
		r.Retryable == nil || !*r.Retryable || r.JSONRPCCode == nil || *r.JSONRPCCode != -32000 || r.HTTPStatus == nil || *r.HTTPStatus != 200 {
		t.Errorf("record = %+v; want the AAP rate limit as ingest decode prints it", r)
	}
	if r.HTTPRequestID != redact.New(testKey).Lookup(email) || strings.Contains(mustJSON(t, st), "dana") {
		t.Errorf("http_request_id %q: want the keyed hash, and the address nowhere in the story", r.HTTPRequestID)
	}
	if !r.ObservedAt.Equal(at) {
		t.Errorf("observed_at %v; want %v to the millisecond", r.ObservedAt, at)
	}
	// Without the deployment key the address cannot be found, and the agent
	// narrows: another agent's name finds nothing.
	if _, err := (&Finder{Conn: conn, Database: opts.Database}).Story(ctx, email, FindOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("without a Redactor, Story(address) = %v; want ErrNotFound", err)
	}
	if _, err := f.Story(ctx, "msg-ids-1", FindOptions{Agent: "other-agent"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Story(message id, another agent) = %v; want ErrNotFound", err)
	}
	// A JSON-RPC id needs its agent: alone, "7" is too short to look up.
	var bad *BadIDError
	if _, err := f.Story(ctx, "7", FindOptions{}); !errors.As(err, &bad) {
		t.Errorf("Story(\"7\") without an agent = %v; want *BadIDError", err)
	}
}

// TestStoryAmbiguousNotFoundBadID: a task id shared by two messages is
// ambiguous (newest first, EventID picks one); an unknown id is not found;
// ids that cannot be ids are refused before any query, and no answer
// quotes the id.
func TestStoryAmbiguousNotFoundBadID(t *testing.T) {
	conn, opts := openDB(t)
	at := time.Now().Add(-20 * time.Minute).Truncate(time.Second)
	store(t, conn, opts,
		ev{ID: "ev-amb-1", At: at, Agent: "a1", Caller: "c1", Status: 404, Body: taskNotFound,
			Request: map[string]any{"task_id": "task-shared", "message_id": "m-amb-1"}},
		ev{ID: "ev-amb-2", At: at.Add(time.Minute), Agent: "a1", Caller: "c1", Status: 404, Body: taskNotFound,
			Request: map[string]any{"task_id": "task-shared", "message_id": "m-amb-2"}})
	f := newFinder(conn, opts)
	ctx := context.Background()
	_, err := f.Story(ctx, "task-shared", FindOptions{})
	var amb *AmbiguousError
	if !errors.As(err, &amb) || amb.Total != 2 || len(amb.Matches) != 2 ||
		amb.Matches[0].EventID != "ev-amb-2" || amb.Matches[1].EventID != "ev-amb-1" || amb.Matches[0].MatchedAs != "task_id" {
		t.Fatalf("Story(shared task) = %v (%+v); want ambiguous, ev-amb-2 then ev-amb-1", err, amb)
	}
	if strings.Contains(err.Error(), "task-shared") {
		t.Errorf("the error quotes the id: %v", err)
	}
	st, err := f.Story(ctx, "task-shared", FindOptions{EventID: "ev-amb-1"})
	if err != nil || st.Record.EventID != "ev-amb-1" {
		t.Fatalf("Story(shared task, event ev-amb-1) = %v, %v", st, err)
	}
	if _, err := f.Story(ctx, "task-shared", FindOptions{EventID: "ev-nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Story(shared task, unknown event) = %v; want ErrNotFound", err)
	}
	if _, err := f.Story(ctx, "err_never_stored", FindOptions{}); !errors.Is(err, ErrNotFound) || strings.Contains(err.Error(), "never") {
		t.Errorf("Story(unknown) = %v; want ErrNotFound, not quoting the id", err)
	}
	for _, id := range []string{"", "abc", strings.Repeat("x", 257), "err_\n01", "err_\x00x1", "err\u2028x", "\xff\xfeabcd"} {
		_, err := f.Story(ctx, id, FindOptions{})
		var bad *BadIDError
		if !errors.As(err, &bad) {
			t.Errorf("Story(%q) = %v; want *BadIDError", id, err)
		} else if id != "" && strings.Contains(err.Error(), id) {
			t.Errorf("the error quotes the id: %v", err)
		}
	}
}

// TestStoryUnavailable: a Finder pointed at a closed port answers
// *UnavailableError, never quoting the id, for Story, List and Ready.
func TestStoryUnavailable(t *testing.T) {
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{"127.0.0.1:1"}, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	f := &Finder{Conn: conn, Redactor: redact.New(testKey)}
	ctx := context.Background()
	const id = "dana.kowalski@customer.example"
	_, err = f.Story(ctx, id, FindOptions{})
	var ue *UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("Story on a closed port = %v; want *UnavailableError", err)
	}
	if strings.Contains(err.Error(), "dana") || strings.Contains(err.Error(), redact.New(testKey).Lookup(id)) {
		t.Errorf("the error quotes the id or its hash: %v", err)
	}
	if err := f.Ready(ctx); !errors.As(err, &ue) {
		t.Errorf("Ready on a closed port = %v; want *UnavailableError", err)
	}
	now := time.Now()
	if _, err := f.List(ctx, ListQuery{From: now.Add(-time.Hour), To: now}); !errors.As(err, &ue) {
		t.Errorf("List on a closed port = %v; want *UnavailableError", err)
	}
}

// TestReady: a migrated database is ready; one without the tables is not.
func TestReady(t *testing.T) {
	conn, opts := openDB(t)
	if err := newFinder(conn, opts).Ready(context.Background()); err != nil {
		t.Errorf("Ready on a migrated database: %v", err)
	}
	var ue *UnavailableError
	if err := (&Finder{Conn: conn, Database: "errtrail_lookup_no_such_db"}).Ready(context.Background()); !errors.As(err, &ue) {
		t.Errorf("Ready without the tables = %v; want *UnavailableError", err)
	}
}

// TestQuotaAttempts: the worked example gone wrong. orchestrator-7 is over
// its per-caller quota and told to wait 12 s; it retries after 2 s (too
// soon), then sends attempt 3 under a new messageId (rotated). The story of
// attempt 2 shows the chain of its messageId with the early retry; the
// story of attempt 3 shows the rotation. The alerter finds no overload of
// the agent, and the meaning says so, from the typed fields only.
func TestQuotaAttempts(t *testing.T) {
	conn, opts := openDB(t)
	at := time.Now().Add(-3 * time.Minute).Truncate(time.Second)
	q := func(id string, d time.Duration, attempt int, msg string) ev {
		return ev{ID: id, At: at.Add(d), Agent: "research-agent", Caller: "orchestrator-7", Attempt: attempt,
			Status: 429, Headers: map[string]string{"Retry-After": "12"},
			Request: map[string]any{"message_id": msg, "idempotency_key": "lead-7781"},
			Body:    rest429("Caller orchestrator-7 exceeded 60 SendMessage calls per minute")}
	}
	store(t, conn, opts, q("ev-q1", 0, 1, "msg-q-1"), q("ev-q2", 2*time.Second, 2, "msg-q-1"), q("ev-q3", 30*time.Second, 3, "msg-q-2"),
		// Another caller of the same agent, and the same caller on
		// another agent: never part of the chain.
		ev{ID: "ev-q-other", At: at.Add(time.Second), Agent: "research-agent", Caller: "planner-2", Attempt: 2,
			Status: 429, Request: map[string]any{"message_id": "msg-q-1"}, Body: rest429("x")})
	f := newFinder(conn, opts)
	ctx := context.Background()

	st, err := f.Story(ctx, "ev-q2", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := st.Attempts
	if a.Key != "message_id" || len(a.Attempts) != 2 || a.Truncated {
		t.Fatalf("attempts of ev-q2 = %+v; want the two replies of msg-q-1 by this caller", a)
	}
	first, second := a.Attempts[0], a.Attempts[1]
	if first.EventID != "ev-q1" || first.This || first.Next != "error" || first.WaitedMS != nil || len(first.Violations) != 0 ||
		first.AskedDelayMS == nil || *first.AskedDelayMS != 12000 {
		t.Errorf("first attempt = %+v", first)
	}
	if second.EventID != "ev-q2" || !second.This || second.Next != "none_seen" || second.WaitedMS == nil || *second.WaitedMS != 2000 ||
		fmt.Sprint(second.Violations) != "[retried_too_soon]" {
		t.Errorf("second attempt = %+v; want waited 2000 ms, retried_too_soon", second)
	}
	if fmt.Sprint(a.Violations) != "[retried_too_soon]" || len(a.Rules) != 1 || a.Rules[0].Checks == "" {
		t.Errorf("violations %v, rules %+v", a.Violations, a.Rules)
	}

	st3, err := f.Story(ctx, "ev-q3", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st3.Attempts.Attempts) != 1 || fmt.Sprint(st3.Attempts.Violations) != "[rotated_message_id]" {
		t.Errorf("attempts of ev-q3 = %+v; want one reply, rotated_message_id", st3.Attempts)
	}
	// The idempotency key chains all three: the key, kept when the
	// messageId was rotated, is never shown, only its hash.
	if st3.Record.IdempotencyKey == "" || len(st3.Record.IdempotencyKey) != 16 || strings.Contains(mustJSON(t, st3), "lead-7781") {
		t.Errorf("idempotency key hash %q; want 16 hex digits and never the key", st3.Record.IdempotencyKey)
	}

	m := st.Meaning
	wantHead := `Quota: caller orchestrator-7 went over research-agent's limit "per-caller".`
	if m.Headline != wantHead {
		t.Errorf("headline %q; want %q", m.Headline, wantHead)
	}
	if st.Context.VerdictError != "" || st.Context.AgentOverloaded ||
		!strings.Contains(m.Text, "The alerter found no overload of research-agent at that moment.") ||
		!strings.Contains(m.Text, "The reply told the caller to wait 12 s.") ||
		!strings.Contains(m.Text, "A retry after the delay is safe because the rejection happened at admission.") {
		t.Errorf("meaning %q (verdict error %q)", m.Text, st.Context.VerdictError)
	}
	if strings.Contains(m.Text+m.Advice, "exceeded 60 SendMessage") {
		t.Errorf("the meaning quotes the message: %q", m.Text)
	}
}

// TestNonRetryableRetried: a TaskNotFoundError is not retryable; the caller
// sent the same message again.
func TestNonRetryableRetried(t *testing.T) {
	conn, opts := openDB(t)
	at := time.Now().Add(-4 * time.Minute).Truncate(time.Second)
	nf := func(id string, d time.Duration, attempt int) ev {
		return ev{ID: id, At: at.Add(d), Agent: "test-runner", Caller: "planner", Attempt: attempt, Method: "GetTask",
			Status: 404, Body: taskNotFound, Request: map[string]any{"message_id": "msg-nf"}}
	}
	store(t, conn, opts, nf("ev-nf-1", 0, 1), nf("ev-nf-2", 5*time.Second, 2))
	st, err := newFinder(conn, opts).Story(context.Background(), "ev-nf-1", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Record.Retryable == nil || *st.Record.Retryable {
		t.Fatalf("retryable %v; want false (TASK_NOT_FOUND)", st.Record.Retryable)
	}
	as := st.Attempts.Attempts
	if len(as) != 2 || !as[0].This || as[0].Next != "error" || fmt.Sprint(as[1].Violations) != "[retried_non_retryable]" ||
		fmt.Sprint(st.Attempts.Violations) != "[retried_non_retryable]" {
		t.Errorf("attempts = %+v; want the retry flagged retried_non_retryable", st.Attempts)
	}
	if !strings.HasPrefix(st.Meaning.Headline, "Not found: test-runner does not know the task or resource that caller planner named (code TASK_NOT_FOUND).") {
		t.Errorf("headline %q", st.Meaning.Headline)
	}
}

// TestContextVerdicts: an agent that fails for every caller and an agent
// whose one caller is over its quota. The alerter's verdicts at each
// record's moment differ (overloaded, not overloaded) and so does the
// meaning; the minutes count the caller's errors by kind.
func TestContextVerdicts(t *testing.T) {
	conn, opts := openDB(t)
	at := time.Now().Add(-6 * time.Minute).Truncate(time.Minute).Add(40 * time.Second)
	var evs []ev
	for c := 0; c < 5; c++ {
		for i := 0; i < 10; i++ {
			evs = append(evs, ev{ID: fmt.Sprintf("ev-ov-%d-%d", c, i), At: at.Add(-time.Duration(i*2) * time.Second),
				Agent: "busy-agent", Caller: fmt.Sprintf("caller-%d", c), Status: 503, Body: rest503})
		}
	}
	for i := 0; i < 12; i++ {
		evs = append(evs, ev{ID: fmt.Sprintf("ev-qt-%d", i), At: at.Add(-time.Duration(i*2) * time.Second),
			Agent: "research-agent", Caller: "orchestrator-7", Status: 429, Body: rest429("quota")})
	}
	// The quota caller two minutes earlier too: the minutes must show both.
	evs = append(evs, ev{ID: "ev-qt-early", At: at.Add(-2 * time.Minute), Agent: "research-agent", Caller: "orchestrator-7",
		Status: 429, Body: rest429("quota")})
	store(t, conn, opts, evs...)
	f := newFinder(conn, opts)
	ctx := context.Background()

	ov, err := f.Story(ctx, "ev-ov-0-0", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	qt, err := f.Story(ctx, "ev-qt-0", FindOptions{})
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if ov.Context.VerdictError != "" || qt.Context.VerdictError != "" {
		t.Fatalf("verdict errors: %q, %q", ov.Context.VerdictError, qt.Context.VerdictError)
	}
	// No alerter recorded incidents in this database: recomputed, and said.
	if ov.Context.VerdictSource != VerdictsRecomputed || qt.Context.VerdictSource != VerdictsRecomputed {
		t.Errorf("verdict sources %q, %q; want %q", ov.Context.VerdictSource, qt.Context.VerdictSource, VerdictsRecomputed)
	}
	if !ov.Context.AgentOverloaded || qt.Context.AgentOverloaded {
		t.Errorf("agent overloaded: busy-agent %v, research-agent %v; want true, false", ov.Context.AgentOverloaded, qt.Context.AgentOverloaded)
	}
	if !ov.Context.VerdictAt.Equal(at) {
		t.Errorf("verdict at %v; want the record's second %v", ov.Context.VerdictAt, at)
	}
	if !strings.Contains(ov.Meaning.Text, "The agent was failing for everyone at that moment") ||
		!strings.Contains(qt.Meaning.Text, "The alerter found no overload of research-agent at that moment.") {
		t.Errorf("meanings:\n%s\n%s", ov.Meaning.Text, qt.Meaning.Text)
	}
	// The record is 6 minutes old: the window's last minutes had not begun
	// when the story was told, so it ends then and lists none of them (the
	// record's minute and the 6 after it have: 14 or 15 minutes in all).
	c := qt.Context
	begun := int((c.To.Sub(c.From) + time.Minute - 1) / time.Minute)
	if !c.From.Equal(at.Truncate(time.Minute).Add(-7*time.Minute)) || c.To.Before(before) || c.To.After(after) ||
		len(c.Minutes) != begun || len(c.Minutes) < ContextMinutes-1 || len(c.Minutes) > ContextMinutes {
		t.Fatalf("context range %v..%v, %d minutes; want it to end between %v and %v with every minute begun by then",
			c.From, c.To, len(c.Minutes), before, after)
	}
	for _, m := range c.Minutes {
		if !m.Minute.Before(after) {
			t.Errorf("minute %v is listed: it had not begun when the story was told (%v)", m.Minute, after)
		}
	}
	counts := func(c Context) (total int64, byMinute map[int64]int64) {
		byMinute = map[int64]int64{}
		for _, m := range c.Minutes {
			for k, n := range m.ByKind {
				if k != "quota" {
					t.Errorf("minute %v has kind %s; the caller had quota only", m.Minute, k)
				}
				total += n
				byMinute[m.Minute.Unix()] += n
			}
		}
		return total, byMinute
	}
	if total, byMinute := counts(c); total != 13 || byMinute[at.Truncate(time.Minute).Add(-2*time.Minute).Unix()] != 1 {
		t.Errorf("minutes %v: want 13 quota replies, one of them two minutes before", byMinute)
	}
	// Told an hour later, the story has the whole window and the same counts.
	later := newFinder(conn, opts)
	later.Now = func() time.Time { return at.Add(time.Hour) }
	lt, err := later.Story(ctx, "ev-qt-0", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lc := lt.Context; len(lc.Minutes) != ContextMinutes || !lc.From.Equal(c.From) || !lc.To.Equal(c.From.Add(ContextMinutes*time.Minute)) {
		t.Errorf("an hour later: context range %v..%v, %d minutes; want %v and 15 minutes", lc.From, lc.To, len(lc.Minutes), c.From)
	} else if total, byMinute := counts(lc); total != 13 || byMinute[at.Truncate(time.Minute).Add(-2*time.Minute).Unix()] != 1 {
		t.Errorf("an hour later: minutes %v: want 13 quota replies, one of them two minutes before", byMinute)
	}
	// The story still holds when the verdicts cannot be computed.
	bad := newFinder(conn, opts)
	cfg := alerter.DefaultConfig()
	cfg.Runaway.MinPerMin = 0 // every caller needs its baseline: a restricted Gather refuses it
	bad.Recompute = &alerter.Recomputer{Conn: conn, Database: opts.Database, Config: &cfg}
	st, err := bad.Story(ctx, "ev-qt-0", FindOptions{})
	if err != nil || st.Context.VerdictError == "" || !strings.Contains(st.Meaning.Text, "is unknown") {
		t.Errorf("story without verdicts: %v, verdict error %q, meaning %q", err, st.Context.VerdictError, st.Meaning.Text)
	}
	// Without a Recompute a moment no alerter recorded has no verdicts,
	// and the story says so instead of calling the agent healthy.
	blind := newFinder(conn, opts)
	blind.Recompute = nil
	st, err = blind.Story(ctx, "ev-qt-0", FindOptions{})
	if err != nil || !strings.Contains(st.Context.VerdictError, "does not compute verdicts afresh") ||
		st.Context.AgentOverloaded || st.Context.LimitTooLow || !strings.Contains(st.Meaning.Text, "is unknown") {
		t.Errorf("story without a Recompute: %v, verdict error %q, meaning %q", err, st.Context.VerdictError, st.Meaning.Text)
	}
	// Past the verdict budget the story is answered without them: the rest
	// is whole, the verdicts false and said not computed in time.
	hurried := newFinder(conn, opts)
	hurried.VerdictBudget = time.Nanosecond
	st, err = hurried.Story(ctx, "ev-ov-0-0", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Context.VerdictError, "not computed in time") || st.Context.AgentOverloaded ||
		!strings.Contains(st.Meaning.Text, "is unknown") || len(st.Context.Minutes) < ContextMinutes-1 || st.Record.EventID != "ev-ov-0-0" {
		t.Errorf("story past the budget: verdict error %q, overloaded %v, meaning %q", st.Context.VerdictError,
			st.Context.AgentOverloaded, st.Meaning.Text)
	}
	// The retry storms are read only when asked for (Finder.RetryStorms),
	// with the same verdicts otherwise.
	storms := newFinder(conn, opts)
	storms.RetryStorms = true
	if st, err = storms.Story(ctx, "ev-ov-0-0", FindOptions{}); err != nil || st.Context.VerdictError != "" ||
		st.Context.AgentOverloaded != ov.Context.AgentOverloaded || st.Context.CallerRunaway != ov.Context.CallerRunaway ||
		st.Context.LimitTooLow != ov.Context.LimitTooLow {
		t.Errorf("story with retry storms: %v, context %+v; without %+v", err, st.Context, ov.Context)
	}
}

// TestStoryHoldsNoPlantedSecret: replies whose message carries a bearer
// token, an e-mail address and a password; ingest redacted them, and the
// story's JSON must not contain them (asserted anyway).
func TestStoryHoldsNoPlantedSecret(t *testing.T) {
	conn, opts := openDB(t)
	at := time.Now().Add(-2 * time.Minute).Truncate(time.Second)
	const token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkYW5hIn0.c2lnbmF0dXJlLXNlY3JldA"
	secrets := []string{"Kq3vZ8pLw2xR7mNb4TyU", "dana.kowalski@customer.example", "hunter2hunter2", token}
	msg := "Bearer Kq3vZ8pLw2xR7mNb4TyU rejected for dana.kowalski@customer.example password=hunter2hunter2 jwt " + token
	store(t, conn, opts,
		ev{ID: "ev-secret-1", At: at, Agent: "research-agent", Caller: "orchestrator-7", Status: 429, Body: rest429(msg),
			Request: map[string]any{"message_id": "msg-secret"}},
		ev{ID: "ev-secret-2", At: at.Add(time.Second), Agent: "research-agent", Caller: "orchestrator-7", Status: 500, Attempt: 2,
			Body: `{"error":{"code":500,"status":"INTERNAL","message":` + quote(msg) + `}}`, Request: map[string]any{"message_id": "msg-secret"}})
	f := newFinder(conn, opts)
	for _, id := range []string{"ev-secret-1", "ev-secret-2"} {
		st, err := f.Story(context.Background(), id, FindOptions{})
		if err != nil {
			t.Fatal(err)
		}
		js := mustJSON(t, st)
		for _, s := range secrets {
			if strings.Contains(js, s) || strings.Contains(strings.ToLower(js), strings.ToLower(s)) {
				t.Errorf("story of %s holds a planted secret %.6s…", id, s)
			}
		}
		if !strings.Contains(fmt.Sprint(st.Record.Findings), "echoes_secret") {
			t.Errorf("findings %v; want echoes_secret", st.Record.Findings)
		}
		var explained bool
		for _, fd := range st.Findings {
			explained = explained || (fd.Code == "echoes_secret" && fd.Checks != "" && fd.Change != "")
		}
		if !explained {
			t.Errorf("findings %+v: echoes_secret not explained", st.Findings)
		}
	}
}

// TestListPagination: 23 errors over two agents and kinds, paged by 5:
// every row once, newest first, filters applied; bounds and foreign or
// tampered cursors refused.
func TestListPagination(t *testing.T) {
	conn, opts := openDB(t)
	at := time.Now().Add(-30 * time.Minute).Truncate(time.Second)
	var evs []ev
	for i := 0; i < 23; i++ {
		e := ev{ID: fmt.Sprintf("ev-list-%02d", i), At: at.Add(time.Duration(i/2) * time.Second), // pairs share a second
			Agent: "list-agent", Caller: "c1", Status: 429, Body: rest429("q")}
		if i%4 == 3 {
			e.Status, e.Body = 503, rest503
		}
		evs = append(evs, e)
	}
	evs = append(evs, ev{ID: "ev-list-other", At: at, Agent: "other-agent", Caller: "c1", Status: 429, Body: rest429("q")})
	store(t, conn, opts, evs...)
	// A copy of one event (a replay) must not be listed twice.
	store(t, conn, opts, evs[4])
	f := newFinder(conn, opts)
	ctx := context.Background()
	q := ListQuery{Agent: "list-agent", From: at.Add(-time.Minute), To: at.Add(time.Minute), Limit: 5}
	seen := map[string]bool{}
	var order []Match
	pages := 0
	for {
		p, err := f.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, m := range p.Errors {
			if seen[m.EventID] {
				t.Errorf("%s listed twice", m.EventID)
			}
			seen[m.EventID] = true
			order = append(order, m)
		}
		if p.Next == "" {
			break
		}
		if pages > 10 {
			t.Fatal("no end")
		}
		q.Cursor = p.Next
	}
	if len(seen) != 23 || pages != 5 || seen["ev-list-other"] {
		t.Errorf("%d rows in %d pages; want the 23 of list-agent in 5", len(seen), pages)
	}
	for i := 1; i < len(order); i++ {
		if order[i].ObservedAt.After(order[i-1].ObservedAt) {
			t.Errorf("not newest first at %d: %v after %v", i, order[i].ObservedAt, order[i-1].ObservedAt)
		}
	}
	p, err := f.List(ctx, ListQuery{Agent: "list-agent", Kind: "overload", From: q.From, To: q.To})
	if err != nil || len(p.Errors) != 5 || p.Next != "" {
		t.Errorf("overload only: %d rows, next %q, %v; want 5", len(p.Errors), p.Next, err)
	}
	first, _ := f.List(ctx, ListQuery{Agent: "list-agent", From: q.From, To: q.To, Limit: 5})
	var bq *BadQueryError
	for name, bad := range map[string]ListQuery{
		"range too long":   {From: at.Add(-8 * 24 * time.Hour), To: at},
		"empty range":      {From: at, To: at},
		"no range":         {},
		"limit too large":  {From: q.From, To: q.To, Limit: MaxListLimit + 1},
		"negative limit":   {From: q.From, To: q.To, Limit: -1},
		"unknown kind":     {From: q.From, To: q.To, Kind: "quota' OR 1=1"},
		"control byte":     {From: q.From, To: q.To, Agent: "a\nb"},
		"garbage cursor":   {From: q.From, To: q.To, Cursor: "!!!"},
		"tampered cursor":  {Agent: "list-agent", From: q.From, To: q.To, Cursor: tamper(first.Next)},
		"another's cursor": {Agent: "other-agent", From: q.From, To: q.To, Cursor: first.Next},
		"another range's":  {Agent: "list-agent", From: q.From.Add(time.Second), To: q.To, Cursor: first.Next},
	} {
		if _, err := f.List(ctx, bad); !errors.As(err, &bq) {
			t.Errorf("%s: %v; want *BadQueryError", name, err)
		}
	}
}

func tamper(c string) string {
	b := []byte(c)
	i := len(b) / 3
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
