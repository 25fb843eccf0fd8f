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
	from, to, err := parseRange(v, h.cfg.Now(), DefaultListRange, lookup.MaxListRange)
	if err != nil {
		h.badRequest(w, r, err.Error())
		return
	}
	q := lookup.ListQuery{
		Agent: strings.TrimSpace(v.Get("agent")), Caller: strings.TrimSpace(v.Get("caller")), Kind: strings.TrimSpace(v.Get("kind")),
		From: from, To: to, Cursor: v.Get("cursor"),
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > lookup.MaxListLimit {
			h.badRequest(w, r, fmt.Sprintf("limit must be a whole number from 1 to %d", lookup.MaxListLimit))
			return
		}
		q.Limit = n
	}
	if h.svc == nil {
		h.unavailable(w, r, form{}, "the list", nil)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	pg, err := h.svc.List(ctx, q)
	switch {
	case err == nil && pg != nil:
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
	p := listPage{Q: q, Errors: pg.Errors, Dashboard: h.links.dashboard(q.Agent, q.Caller, from, to)}
	if pg.Next != "" {
		next := q
		next.Cursor = pg.Next
		p.Next = ListURL(h.links.base, next)
	}
	if q.Cursor != "" {
		first := q
		first.Cursor = ""
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
	switch {
	case err == nil && rep != nil:
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
	if !from.Before(to) {
		return from, to, errors.New("from must be before to")
	}
	if to.Sub(from) > max {
		return from, to, fmt.Errorf("the range is longer than %s; narrow it", duration(max.Milliseconds()))
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
