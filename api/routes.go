package api

import (
	"net/http"
	"net/url"
	"strings"
)

// access says what a route asks of a client before it is served.
type access int

const (
	accessOpen    access = iota // probes: no token, no rate limit
	accessMetrics               // a token when Config.MetricsAuth; no rate limit
	accessAPI                   // a token when auth is on; rate limited; lookups under the request timeout
)

// route is one row of the route table: the only place that says which
// paths, parameters and statuses the api serves. docs/openapi.yaml
// describes the same, and a test keeps them equal.
type route struct {
	pattern  string   // path template as in OpenAPI ("/v1/errors/{id}"); also the route label of metrics and logs
	query    []string // the query parameters it takes; any other is refused with 400
	statuses []int    // every status it can answer with
	access   access
	serve    func(s *Server, w *recorder, r *request)
}

// Statuses every route can answer with, and those of every lookup.
var (
	statusesAny    = []int{http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge}
	statusesLookup = []int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusGatewayTimeout}
)

func statuses(sets ...[]int) []int {
	var out []int
	for _, s := range sets {
		out = append(out, s...)
	}
	return out
}

// routes is the route table.
var routes = []route{
	{
		pattern:  "/v1/errors/{id}",
		query:    []string{"agent", "event_id"},
		statuses: statuses([]int{http.StatusOK, http.StatusMultipleChoices, http.StatusNotFound}, statusesAny, statusesLookup),
		access:   accessAPI,
		serve:    (*Server).serveStory,
	},
	{
		pattern:  "/v1/errors",
		query:    []string{"agent", "caller", "kind", "from", "to", "limit", "cursor"},
		statuses: statuses([]int{http.StatusOK}, statusesAny, statusesLookup),
		access:   accessAPI,
		serve:    (*Server).serveList,
	},
	{
		pattern:  "/v1/agents/{agent}/report",
		query:    []string{"from", "to"},
		statuses: statuses([]int{http.StatusOK, http.StatusNotFound}, statusesAny, statusesLookup),
		access:   accessAPI,
		serve:    (*Server).serveReport,
	},
	{
		pattern:  "/v1/report",
		query:    []string{"from", "to"},
		statuses: statuses([]int{http.StatusOK, http.StatusNotFound}, statusesAny, statusesLookup),
		access:   accessAPI,
		serve:    (*Server).serveReport,
	},
	{
		pattern:  "/v1/incidents",
		query:    []string{"agent", "kind", "open", "from", "to", "limit"},
		statuses: statuses([]int{http.StatusOK}, statusesAny, statusesLookup),
		access:   accessAPI,
		serve:    (*Server).serveIncidents,
	},
	{
		pattern:  "/v1/agents/{agent}/groups",
		query:    []string{"new", "version", "group", "from", "to", "limit", "cursor"},
		statuses: statuses([]int{http.StatusOK}, statusesAny, statusesLookup),
		access:   accessAPI,
		serve:    (*Server).serveGroups,
	},
	{
		pattern:  "/healthz",
		statuses: statuses([]int{http.StatusOK}, statusesAny),
		access:   accessOpen,
		serve:    (*Server).serveHealth,
	},
	{
		pattern:  "/readyz",
		statuses: statuses([]int{http.StatusOK, http.StatusServiceUnavailable}, statusesAny),
		access:   accessOpen,
		serve:    (*Server).serveReady,
	},
	{
		pattern:  "/metrics",
		statuses: statuses([]int{http.StatusOK, http.StatusUnauthorized}, statusesAny),
		access:   accessMetrics,
		serve:    (*Server).serveMetrics,
	},
}

// match finds the route of an escaped path and the values of its
// wildcards, unescaped. Matching is by whole segments; a path with an empty
// segment or a bad escape matches nothing. There are no redirects: a
// redirect's Location would repeat the path, and the path holds the id.
func match(escapedPath string) (*route, map[string]string) {
	segs := strings.Split(strings.TrimPrefix(escapedPath, "/"), "/")
	for i := range routes {
		rt := &routes[i]
		want := strings.Split(strings.TrimPrefix(rt.pattern, "/"), "/")
		if len(want) != len(segs) {
			continue
		}
		var vals map[string]string
		ok := true
		for j, w := range want {
			if name, isVar := wildcard(w); isVar {
				v, err := url.PathUnescape(segs[j])
				if err != nil || v == "" {
					ok = false
					break
				}
				if vals == nil {
					vals = map[string]string{}
				}
				vals[name] = v
			} else if w != segs[j] {
				ok = false
				break
			}
		}
		if ok {
			return rt, vals
		}
	}
	return nil, nil
}

// wildcard returns NAME for a "{NAME}" segment.
func wildcard(seg string) (string, bool) {
	if len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
		return seg[1 : len(seg)-1], true
	}
	return "", false
}

// pathParams returns the wildcard names of a pattern, in order.
func (rt *route) pathParams() []string {
	var out []string
	for _, seg := range strings.Split(rt.pattern, "/") {
		if n, ok := wildcard(seg); ok {
			out = append(out, n)
		}
	}
	return out
}
