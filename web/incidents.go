package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/lookup"
)

// Incidents page ranges: 7 days by default, 90 (the table's retention) at
// most; at most this many episodes drawn.
const (
	DefaultIncidentRange = 7 * 24 * time.Hour
	MaxIncidentRange     = 90 * 24 * time.Hour
	maxIncidentsShown    = 500
)

// incidentsPage is the alerter's episodes over a range, as a timeline and
// a table.
type incidentsPage struct {
	Agent, Kind string
	From, To    string // the range as the form shows it
	Chart       timeline
	Rows        []incidentRow
	Truncated   bool
}

type incidentRow struct {
	incidents.Incident
	Errors string // the list of the errors behind it (agent, caller, kind, range)
}

func (p incidentsPage) PageTitle() string {
	if p.Agent != "" {
		return "Incidents of " + p.Agent
	}
	return "Incidents"
}

// IncidentsURL is the address of the incidents page of agent ("" every
// agent) and kind ("" every kind) over [from, to) (zero: the default).
// Alert annotations can link to it.
func IncidentsURL(externalURL, agent, kind string, from, to time.Time) string {
	v := url.Values{}
	if agent != "" {
		v.Set("agent", agent)
	}
	if kind != "" {
		v.Set("kind", kind)
	}
	setRange(v, from, to)
	u := strings.TrimRight(externalURL, "/") + "/incidents"
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

func (h *handler) incidentsPage(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	f := incidents.Filter{Agent: strings.TrimSpace(v.Get("agent")), Limit: maxIncidentsShown + 1}
	if k := strings.TrimSpace(v.Get("kind")); k != "" {
		kind, err := incidents.ParseKind(k)
		if err != nil {
			h.badRequest(w, r, "kind must be one of overload, runaway, limit_too_low, retry_storm, gateway_mangling, untyped_errors, undecided")
			return
		}
		f.Kind = kind
	}
	if len(f.Agent) > lookup.MaxIDLen {
		h.badRequest(w, r, "agent is longer than any stored agent")
		return
	}
	var err error
	if f.From, f.To, err = parseRange(v, h.cfg.Now(), DefaultIncidentRange, MaxIncidentRange); err != nil {
		h.badRequest(w, r, err.Error())
		return
	}
	if h.inc == nil {
		h.unavailable(w, r, form{}, "the incidents", nil)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	list, err := h.inc.Incidents(ctx, f)
	switch {
	case err == nil:
	case errors.Is(err, incidents.ErrBadFilter):
		h.badRequest(w, r, "the range is not valid: from must be before to")
		return
	case isUnavailable(err):
		h.unavailable(w, r, form{}, "the incidents", err)
		return
	default:
		h.failed(w, r, form{}, err)
		return
	}
	p := incidentsPage{Agent: f.Agent, Kind: string(f.Kind),
		From: f.From.UTC().Format(time.RFC3339), To: f.To.UTC().Format(time.RFC3339)}
	if len(list) > maxIncidentsShown {
		list, p.Truncated = list[:maxIncidentsShown], true
	}
	p.Chart = newTimeline(list, f.From, f.To)
	for _, i := range list {
		end := i.End
		if i.Open() {
			end = i.LastSeen.Add(time.Minute)
		}
		q := lookup.ListQuery{Agent: i.Agent, Caller: i.Caller, From: i.Start.Truncate(time.Minute), To: end.Add(time.Minute - 1).Truncate(time.Minute)}
		if i.Kind == incidents.Overload {
			q.Kind = "overload"
		}
		if q.To.Sub(q.From) > lookup.MaxListRange {
			q.From = q.To.Add(-lookup.MaxListRange)
		}
		p.Rows = append(p.Rows, incidentRow{Incident: i, Errors: ListURL(h.links.base, q)})
	}
	h.render(w, r, http.StatusOK, "incidents", p)
}
