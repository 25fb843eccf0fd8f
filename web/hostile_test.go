package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// TestUnitListBadInput: a bad kind, a range outside 1970..2106, a long
// agent are 400 pages naming the field, before the service is asked, and
// nothing is logged at ERROR; a *lookup.BadQueryError of the service (a
// cursor of another list) is a 400 too, not a 500.
func TestUnitListBadInput(t *testing.T) {
	for target, why := range map[string]string{
		"/errors?kind=bogus":                             "kind must be one of quota",
		"/errors?from=1900-01-01&to=1900-01-02":          "between 1970 and 2106",
		"/errors?to=2200-01-01":                          "between 1970 and 2106",
		"/errors?agent=" + strings.Repeat("a", 300):      "agent must be a stored value",
		"/errors?caller=a%E2%80%A8b":                     "caller must be a stored value",
		"/errors?cursor=c1&from=yesterday":               "from: not a time",
		"/errors?cursor=c1&to=99999999999999999":         "", // parsed; the service judges the cursor
		"/agents/a/report?from=1900-01-01&to=1900-01-02": "between 1970 and 2106",
	} {
		r := newRig(Config{})
		r.svc.listErr = &lookup.BadQueryError{Param: "to", Reason: "x"}
		res, body := r.get(t, target)
		wantStatus(t, res, http.StatusBadRequest, body)
		wantText(t, body, why)
		if why != "" && r.svc.calls != 0 {
			t.Errorf("%s: the service was asked", target)
		}
		if strings.Contains(r.log.String(), "level=ERROR") {
			t.Errorf("%s: logged at ERROR: %s", target, r.log.String())
		}
	}
	r := newRig(Config{})
	r.svc.listErr = &lookup.BadQueryError{Param: "cursor", Reason: "the cursor belongs to another query"}
	res, body := r.get(t, "/errors?agent=a&cursor=forged")
	wantStatus(t, res, http.StatusBadRequest, body)
	wantText(t, body, "start from the first page")
	wantNoText(t, body, "forged")
	if q := r.svc.gotQ; !q.From.IsZero() || !q.To.IsZero() {
		t.Errorf("with a cursor and no from/to the page passed a range %v..%v; the cursor's must be used", q.From, q.To)
	}
}

// TestUnitListPagesOnTheCursorsRange: on a later page the range shown and
// linked is the one the service used (the cursor's), and the Next link
// carries no range.
func TestUnitListPagesOnTheCursorsRange(t *testing.T) {
	r := newRig(Config{})
	from, to := now.Add(-2*time.Hour).Add(123*time.Millisecond), now.Add(-time.Hour).Add(456*time.Millisecond)
	r.svc.page = &lookup.Page{Errors: []lookup.Match{{EventID: "e1", Agent: "a", Kind: "quota", ObservedAt: from}}, Next: "c3", From: from, To: to}
	res, body := r.get(t, "/errors?agent=a&cursor=c2")
	wantStatus(t, res, http.StatusOK, body)
	wantText(t, body, `href="/errors?agent=a&amp;cursor=c3" rel="next"`,
		`href="/errors?agent=a&amp;from=`+strings.ReplaceAll(from.Format(time.RFC3339), ":", "%3A")+`&amp;to=`+strings.ReplaceAll(to.Truncate(time.Second).Add(time.Second).Format(time.RFC3339), ":", "%3A")+`"`)
}

// TestUnitReportUnknownAgent: the report of an agent errtrail never saw is
// a 404 page that does not repeat the name.
func TestUnitReportUnknownAgent(t *testing.T) {
	r := newRig(Config{})
	r.rep.err = report.ErrUnknownAgent
	res, body := r.get(t, "/agents/planted-agent-name/report")
	wantStatus(t, res, http.StatusNotFound, body)
	wantText(t, body, "Unknown agent")
	wantNoText(t, body, "planted-agent-name")
}

// TestUnitBusy: a concurrency limit's refusal is a 503 page with its
// Retry-After, logged at INFO.
func TestUnitBusy(t *testing.T) {
	r := newRig(Config{})
	r.rep.err = busy{}
	res, body := r.get(t, "/report")
	wantStatus(t, res, http.StatusServiceUnavailable, body)
	if got := res.Header.Get("Retry-After"); got != "7" {
		t.Errorf("Retry-After %q; want 7", got)
	}
	if !strings.Contains(r.log.String(), "level=INFO") || strings.Contains(r.log.String(), "level=WARN") {
		t.Errorf("log: %s", r.log.String())
	}
}

type busy struct{}

func (busy) Error() string             { return "busy" }
func (busy) RetryAfter() time.Duration { return 6500 * time.Millisecond }

// TestUnitNoRedirects: paths that http.ServeMux would redirect (not
// canonical, or a subtree without its slash) are 404 pages without a
// Location and without the path's id.
func TestUnitNoRedirects(t *testing.T) {
	r := newRig(Config{})
	for _, target := range []string{"//errors/planted-id-77", "/errors/../planted-id-77/", "/./errors", "/static", "/agents/planted-id-77//report", "/agents/x/report/.."} {
		rec := httptestRecord(r, target)
		if rec.Code != http.StatusNotFound || rec.Header().Get("Location") != "" {
			t.Errorf("%s: %d Location %q; want 404 without Location", target, rec.Code, rec.Header().Get("Location"))
		}
		if strings.Contains(rec.Body.String(), "planted-id-77") {
			t.Errorf("%s: the body repeats the path", target)
		}
	}
	if rec := httptestRecord(r, "/static/style.css"); rec.Code != http.StatusOK {
		t.Errorf("the stylesheet: %d", rec.Code)
	}
}

func httptestRecord(r *rig, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.URL.Path, req.URL.RawPath, req.RequestURI = target, "", target
	r.h.ServeHTTP(rec, req)
	return rec
}
