package web

// TestBrowserStack: the support page on the REAL stack, as a support
// engineer uses it. The load tool publishes a scenario to a fresh Kafka
// topic, ingest.Pipeline (in process) stores it in a fresh ClickHouse
// database, and Chromium looks up a real quota error_id through the real
// lookup.Finder: typed and submitted with Enter, the story shows the kind,
// the attempts table and the context; an unknown id gives the not-found
// page; a Finder whose ClickHouse port is closed gives the unavailable page.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/internal/stackload"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// scenarioForStack has an AAP agent (dealer-agent), whose RATE_LIMITED
// replies carry an error_id, and callers that retry, so a quota record has
// attempts.
const scenarioForStack = "ignores-retry-after"

func TestBrowserStack(t *testing.T) {
	start := time.Now()
	b := newBrowser(t)

	st := stackload.Scenario(t, scenarioForStack)
	t.Logf("loaded and ingested %s: %d messages in %s", scenarioForStack, st.Produced, time.Since(start).Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errorID, agent string
	var attempt uint16
	err := st.Conn.QueryRow(ctx, "SELECT error_id, agent, attempt FROM "+st.Database+".errors"+
		" WHERE kind = 'quota' AND error_id != '' AND attempt > 1 ORDER BY observed_at, event_id LIMIT 1").Scan(&errorID, &agent, &attempt)
	if err != nil {
		t.Fatalf("pick a quota error_id with attempts: %v", err)
	}
	t.Logf("looking up error_id %s (agent %s, attempt %d)", errorID, agent, attempt)

	finder := &lookup.Finder{Conn: st.Conn, Database: st.Database, RetryStorms: true,
		Recompute: &alerter.Recomputer{Conn: st.Conn, Database: st.Database}}
	srv := httptest.NewServer(New(Config{Logger: stackload.Logger(t)}, finder, &report.ClickHouse{Conn: st.Conn, Database: st.Database}))
	defer srv.Close()

	// The story, looked up from the start page with the keyboard.
	if code := b.Open(srv.URL + "/"); code != http.StatusOK {
		t.Fatalf("start page: status %d", code)
	}
	b.Screenshot("1-start")
	res := b.SubmitByKeyboard(errorID, "")
	b.Screenshot("2-story")
	if res.Status != http.StatusOK {
		t.Fatalf("story of %s: status %d; the page shows:\n%s", errorID, res.Status, b.Text())
	}
	want, err := finder.Story(ctx, errorID, lookup.FindOptions{})
	if err != nil {
		t.Fatalf("Finder.Story(%s): %v", errorID, err)
	}
	if want.Meaning.Headline == "" {
		t.Error("the story has no headline sentence")
	}
	text := b.Text()
	wantShown(t, "story", text,
		want.Meaning.Headline, // the kind's sentence, from lookup's meaning table
		"Kind quota", "Found by its error_id",
		"Attempts", "(this reply)", "Asked delay", "Waited",
		"Context", "Verdicts", "Retry storm", "Agent overloaded",
		"The record", "dealer-agent")
	if n, _ := strconv.Atoi(b.Eval(`String(document.querySelectorAll('table.attempts tbody tr').length)`)); n < 2 || n != len(want.Attempts.Attempts) {
		t.Errorf("the attempts table has %d rows; the story has %d attempts, and the record is attempt %d", n, len(want.Attempts.Attempts), attempt)
	}
	if n := b.Eval(`String(document.querySelectorAll('table.context tbody tr').length)`); n == "0" {
		t.Error("the context table has no minutes")
	}
	if n := b.Eval(`String(document.querySelectorAll('table.context tbody tr.this').length)`); n != "1" {
		t.Errorf("the context table marks %s minutes as the record's; want 1", n)
	}

	// This caller's recent errors on the agent, from the story's link: the
	// list holds the record, linked by its error_id, on this page or on one
	// reached by the "Older" links (Page.Next).
	if code, err := chromedpClick(b, `a[href*="caller="]`); err != nil || code != http.StatusOK {
		t.Errorf("recent errors: status %d, %v", code, err)
	} else {
		wantShown(t, "recent errors", b.Text(), "Recent errors of a caller on "+agent)
		b.Screenshot("3-recent")
		pages := 1
		for !strings.Contains(b.Text(), errorID) && pages < 100 {
			code, err := chromedpClick(b, `a[rel=next]`)
			if err != nil || code != http.StatusOK {
				t.Errorf("recent errors, page %d: status %d, %v", pages+1, code, err)
				break
			}
			pages++
		}
		if !strings.Contains(b.Text(), errorID) {
			t.Errorf("the caller's recent errors do not list %s (%d pages)", errorID, pages)
		}
		t.Logf("the record is on page %d of the caller's recent errors", pages)
	}
	b.Open(srv.URL + "/")
	b.SubmitByKeyboard(errorID, "")

	// The agent's report, from the story's link.
	resp, err := chromedpClick(b, `a[href^="/agents/"]`)
	if err != nil {
		t.Errorf("follow the report link: %v", err)
	} else if resp != http.StatusOK {
		t.Errorf("report of %s: status %d", agent, resp)
	} else {
		wantShown(t, "report", b.Text(), "Conformance report of "+agent, "Rules broken", "Rules kept")
		b.Screenshot("4-report")
	}

	// An id nothing carries.
	b.Open(srv.URL + "/")
	missing := fmt.Sprintf("web-test-missing-%d", rand.Uint64())
	if res := b.SubmitByKeyboard(missing, ""); res.Status != http.StatusNotFound {
		t.Errorf("unknown id: status %d; want 404", res.Status)
	}
	wantShown(t, "not found", b.Text(), "No error reply found", "What was searched", "error_id", "message_id")
	b.Screenshot("5-notfound")

	// ClickHouse unreachable: a Finder on a port nothing listens on.
	down := stackload.Open(t, stackload.ClosedPort(t))
	srvDown := httptest.NewServer(New(Config{Logger: stackload.Logger(t), Timeout: 10 * time.Second},
		&lookup.Finder{Conn: down, Database: st.Database}, &report.ClickHouse{Conn: down, Database: st.Database}))
	defer srvDown.Close()
	b.Open(srvDown.URL + "/")
	if res := b.SubmitByKeyboard(errorID, ""); res.Status != http.StatusServiceUnavailable {
		t.Errorf("store down: status %d; want 503", res.Status)
	}
	text = b.Text()
	wantShown(t, "unavailable", text, "Try again in a moment", "Retry in a minute")
	for _, internal := range []string{"refused", "127.0.0.1", "dial"} {
		if strings.Contains(text, internal) {
			t.Errorf("the unavailable page tells internals: %q", internal)
		}
	}
	b.Screenshot("6-unavailable")
	t.Logf("browser test on the stack: %s in all", time.Since(start).Round(time.Millisecond))
}

// chromedpClick clicks the first element that matches css and returns the
// status of the page it leads to.
func chromedpClick(b *browser, css string) (int64, error) {
	href := b.Eval(`(document.querySelector('` + css + `') || {}).href || ''`)
	if href == "" {
		return 0, fmt.Errorf("no element %s", css)
	}
	return b.Open(href), nil
}
