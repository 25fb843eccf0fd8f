package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// listPage is one page of recent errors.
type listPage struct {
	Q                      lookup.ListQuery
	Errors                 []lookup.Match
	Next, First, Dashboard string // links; Next "" on the last page, First "" on the first
}

func (p listPage) PageTitle() string {
	switch {
	case p.Q.Agent != "" && p.Q.Caller != "":
		return "Recent errors of a caller on " + p.Q.Agent
	case p.Q.Agent != "":
		return "Recent errors on " + p.Q.Agent
	}
	return "Recent errors"
}

func (h *handler) list(w http.ResponseWriter, r *http.Request, v url.Values) {
	q := lookup.ListQuery{
		Agent: strings.TrimSpace(v.Get("agent")), Caller: strings.TrimSpace(v.Get("caller")), Kind: strings.TrimSpace(v.Get("kind")),
		Cursor: v.Get("cursor"),
	}
	var err error
	if q.Cursor != "" {
		// The cursor holds the range of the first page: a time given
		// with it must be the cursor's, one not given is the cursor's.
		q.From, q.To, err = parseEnds(v)
	} else {
		q.From, q.To, err = parseRange(v, h.cfg.Now(), DefaultListRange, lookup.MaxListRange)
	}
	if err != nil {
		h.badRequest(w, r, err.Error())
		return
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > lookup.MaxListLimit {
			h.badRequest(w, r, fmt.Sprintf("limit must be a whole number from 1 to %d", lookup.MaxListLimit))
			return
		}
		q.Limit = n
	}
	if q.Cursor == "" {
		if _, err := lookup.CheckList(q); err != nil {
			h.badQuery(w, r, err)
			return
		}
	}
	if h.svc == nil {
		h.unavailable(w, r, form{}, "the list", nil)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	pg, err := h.svc.List(ctx, q)
	var bq *lookup.BadQueryError
	switch {
	case err == nil && pg != nil:
	case errors.As(err, &bq):
		h.badQuery(w, r, err)
		return
	case isUnavailable(err):
		h.unavailable(w, r, form{}, "the list", err)
		return
	default:
		if err == nil {
			err = errors.New("web: List returned neither a page nor an error")
		}
		h.failed(w, r, form{}, err)
		return
	}
	if !pg.From.IsZero() { // the range the service used: the cursor's on later pages
		q.From, q.To = pg.From, pg.To
	}
	p := listPage{Q: q, Errors: pg.Errors, Dashboard: h.links.dashboard(q.Agent, q.Caller, q.From, q.To)}
	if pg.Next != "" {
		// The cursor carries the range; the link gives no from and to,
		// which ListURL would write to the second only.
		next := q
		next.Cursor, next.From, next.To = pg.Next, time.Time{}, time.Time{}
		p.Next = ListURL(h.links.base, next)
	}
	if q.Cursor != "" {
		first := q
		first.Cursor = ""
		first.To = first.To.Add(time.Second - 1).Truncate(time.Second) // ListURL writes whole seconds: keep the last
		p.First = ListURL(h.links.base, first)
	}
	h.render(w, r, http.StatusOK, "list", p)
}

// reportPage is a conformance report.
type reportPage struct {
	R         *report.Report
	From, To  string // the range as the form shows it
	Action    string // the range form's target
	Dashboard string
	Recent    string // the agent's recent errors over the end of the range (a list spans at most lookup.MaxListRange)
	Chart     chart  // the rules over time (report.Over)
	Charted   int    // how many of the broken rules the chart draws
}

func (p reportPage) PageTitle() string {
	if p.R.Agent == "" {
		return "Conformance report of every agent"
	}
	return "Conformance report of " + p.R.Agent
}

func (h *handler) agentReport(w http.ResponseWriter, r *http.Request) {
	agent := r.PathValue("agent")
	if strings.TrimSpace(agent) == "" {
		h.badRequest(w, r, "the address names no agent")
		return
	}
	h.report(w, r, agent)
}

func (h *handler) allReport(w http.ResponseWriter, r *http.Request) { h.report(w, r, "") }

func (h *handler) report(w http.ResponseWriter, r *http.Request, agent string) {
	from, to, err := parseRange(r.URL.Query(), h.cfg.Now(), DefaultReportRange, report.MaxRange)
	if err != nil {
		h.badRequest(w, r, err.Error())
		return
	}
	if h.rep == nil {
		h.unavailable(w, r, form{}, "the report", nil)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	rep, err := h.rep.Report(ctx, agent, from, to)
	var rng *report.BadRangeError
	switch {
	case err == nil && rep != nil:
	case errors.Is(err, report.ErrUnknownAgent):
		// The name is not repeated: it is what the person typed.
		h.render(w, r, http.StatusNotFound, "message", messagePage{
			Title: "Unknown agent",
			Lines: []string{"errtrail has stored no error reply of this agent. Check the name as the agent publishes it, or open the report of every agent."},
		})
		return
	case errors.As(err, &rng):
		h.badRequest(w, r, "the range is not one a report covers: from 1970 to 2106, from before to, at most "+duration(report.MaxRange.Milliseconds()))
		return
	case isUnavailable(err):
		h.unavailable(w, r, form{}, "the report", err)
		return
	default:
		if err == nil {
			err = errors.New("web: Report returned neither a report nor an error")
		}
		h.failed(w, r, form{}, err)
		return
	}
	p := reportPage{
		R: rep, From: from.UTC().Format(time.RFC3339), To: to.UTC().Format(time.RFC3339),
		Action:    ReportURL(h.links.base, agent, time.Time{}, time.Time{}),
		Dashboard: h.links.dashboard(agent, "", from, to),
	}
	p.Chart, p.Charted = overChart(rep)
	if agent != "" {
		lf := from
		if to.Sub(lf) > lookup.MaxListRange {
			lf = to.Add(-lookup.MaxListRange)
		}
		p.Recent = ListURL(h.links.base, lookup.ListQuery{Agent: agent, From: lf, To: to})
	}
	h.render(w, r, http.StatusOK, "report", p)
}

func (h *handler) badRequest(w http.ResponseWriter, r *http.Request, why string) {
	h.render(w, r, http.StatusBadRequest, "message", messagePage{Title: "Bad request", Lines: []string{why}})
}

// badQuery answers 400 for a *lookup.BadQueryError, naming the field at
// fault in fixed words (the error's reason is not shown: the page says
// what to give instead).
func (h *handler) badQuery(w http.ResponseWriter, r *http.Request, err error) {
	var bq *lookup.BadQueryError
	errors.As(err, &bq)
	why := "the range must be positive and at most " + duration(lookup.MaxListRange.Milliseconds())
	if bq != nil {
		switch bq.Param {
		case "agent", "caller":
			why = bq.Param + " must be a stored value: at most 256 bytes of UTF-8 without control characters"
		case "kind":
			why = "kind must be one of " + strings.Join(lookup.Kinds, ", ")
		case "from", "to":
			why = bq.Param + " must lie between 1970 and 2106"
		case "limit":
			why = fmt.Sprintf("limit must be a whole number from 1 to %d", lookup.MaxListLimit)
		case "cursor":
			why = "the link to the next page is not valid for this list (or has expired): start from the first page"
		}
	}
	h.badRequest(w, r, why)
}

// parseRange reads from and to: RFC 3339, a minute without a zone
// (2026-11-01T09:30, taken as UTC), or Unix milliseconds (Grafana's
// ${__from}). Missing ends default to [now-def, now]; the range must be
// positive and at most max.
func parseRange(v url.Values, now time.Time, def, max time.Duration) (from, to time.Time, err error) {
	to, from = now.UTC(), time.Time{}
	if s := strings.TrimSpace(v.Get("to")); s != "" {
		if to, err = parseTime(s); err != nil {
			return from, to, fmt.Errorf("to: %v", err)
		}
	}
	from = to.Add(-def)
	if s := strings.TrimSpace(v.Get("from")); s != "" {
		if from, err = parseTime(s); err != nil {
			return from, to, fmt.Errorf("from: %v", err)
		}
	}
	if from.Before(lookup.MinListTime) || to.After(lookup.MaxListTime) {
		return from, to, errors.New("the range must lie between 1970 and 2106")
	}
	if !from.Before(to) {
		return from, to, errors.New("from must be before to")
	}
	if to.Sub(from) > max {
		return from, to, fmt.Errorf("the range is longer than %s; narrow it", duration(max.Milliseconds()))
	}
	return from, to, nil
}

// parseEnds reads from and to as given, zero when not given.
func parseEnds(v url.Values) (from, to time.Time, err error) {
	for _, e := range []struct {
		name string
		t    *time.Time
	}{{"from", &from}, {"to", &to}} {
		if s := strings.TrimSpace(v.Get(e.name)); s != "" {
			if *e.t, err = parseTime(s); err != nil {
				return from, to, fmt.Errorf("%s: %v", e.name, err)
			}
		}
	}
	return from, to, nil
}

func parseTime(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errors.New("not a time: use RFC 3339 (2026-11-01T09:30:00Z), 2026-11-01T09:30 (UTC) or Unix milliseconds")
}
