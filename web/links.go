package web

import (
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/errtrail/errtrail/lookup"
)

// grafanaAgentUID is the uid of the agent dashboard (dashboards.UIDAgent,
// checked by a test; not imported, so that the server does not link the
// dashboard SDK).
const grafanaAgentUID = "errtrail-agent"

// StoryURL is the address of the story of id: externalURL + /errors?id=…
// (with agent and event_id when set). Alert annotations link to it.
func StoryURL(externalURL, id string, opt lookup.FindOptions) string {
	v := url.Values{}
	v.Set("id", id)
	if opt.Agent != "" {
		v.Set("agent", opt.Agent)
	}
	if opt.EventID != "" {
		v.Set("event_id", opt.EventID)
	}
	return strings.TrimRight(externalURL, "/") + "/errors?" + v.Encode()
}

// ListURL is the address of the list of recent errors that q selects
// (agent, caller, kind, from, to; zero values are left out): "this caller's
// recent errors on this agent" for an alert.
func ListURL(externalURL string, q lookup.ListQuery) string {
	v := url.Values{}
	for _, kv := range [][2]string{{"agent", q.Agent}, {"caller", q.Caller}, {"kind", q.Kind}, {"cursor", q.Cursor}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	setRange(v, q.From, q.To)
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	u := strings.TrimRight(externalURL, "/") + "/errors"
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

// ReportURL is the address of agent's conformance report over [from, to);
// agent "" is the report of every agent, zero times the default range.
func ReportURL(externalURL, agent string, from, to time.Time) string {
	u := strings.TrimRight(externalURL, "/")
	if agent == "" {
		u += "/report"
	} else {
		u += "/agents/" + url.PathEscape(agent) + "/report"
	}
	v := url.Values{}
	setRange(v, from, to)
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

// setRange writes from and to as RFC 3339 times, the form the pages read
// back (they also take Unix milliseconds, Grafana's ${__from}).
func setRange(v url.Values, from, to time.Time) {
	if !from.IsZero() {
		v.Set("from", from.UTC().Format(time.RFC3339))
	}
	if !to.IsZero() {
		v.Set("to", to.UTC().Format(time.RFC3339))
	}
}

// links builds the pages' links from the configuration.
type links struct {
	base    string // ExternalURL without a trailing slash
	grafana string // GrafanaURL without a trailing slash
}

func newLinks(external, grafana string) links {
	return links{base: strings.TrimRight(external, "/"), grafana: strings.TrimRight(grafana, "/")}
}

// path is a link to one of errtrail's own pages.
func (l links) path(p string) string { return l.base + p }

// event links to the story of one stored record by its event_id: the
// event_id is errtrail's key, so a link never carries the id a person typed.
func (l links) event(eventID string) string {
	return StoryURL(l.base, eventID, lookup.FindOptions{EventID: eventID})
}

// api links to the JSON API's view of one record.
func (l links) api(eventID string) string {
	return l.base + "/v1/errors/" + url.PathEscape(eventID) + "?event_id=" + url.QueryEscape(eventID)
}

// dashboard links to Grafana's agent dashboard over [from, to), or "" when
// no Grafana is configured.
func (l links) dashboard(agent, caller string, from, to time.Time) string {
	if l.grafana == "" {
		return ""
	}
	v := url.Values{}
	if agent != "" {
		v.Set("var-agent", agent)
	}
	if caller != "" {
		v.Set("var-caller", caller)
	}
	if !from.IsZero() && !to.IsZero() {
		v.Set("from", strconv.FormatInt(from.UnixMilli(), 10))
		v.Set("to", strconv.FormatInt(to.UnixMilli(), 10))
	}
	return l.grafana + "/d/" + grafanaAgentUID + "?" + v.Encode()
}

func (l links) funcs() template.FuncMap {
	return template.FuncMap{
		"path":        l.path,
		"eventURL":    l.event,
		"apiURL":      l.api,
		"dashboard":   l.dashboard,
		"reportURL":   func(agent string, from, to time.Time) string { return ReportURL(l.base, agent, from, to) },
		"groupURL":    func(agent, id string) string { return GroupsURL(l.base, agent, id, false) },
		"when":        when,
		"minute":      func(t time.Time) string { return t.UTC().Format("15:04") },
		"ms":          millis,
		"percent":     percent,
		"optInt":      optInt,
		"optBool":     optBool,
		"yesNo":       yesNo,
		"count":       func(n int64) string { return strconv.FormatInt(n, 10) },
		"inc":         func(i int) int { return i + 1 },
		"add":         func(a, b int) int { return a + b },
		"sub":         func(a, b int) int { return a - b },
		"orNone":      orNone,
		"nextWord":    nextWord,
		"sourceWords": sourceWords,
	}
}
