package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/errtrail/errtrail/lookup"
)

// problemType prefixes every problem's code to give its RFC 9457 type: an
// identifier that never changes, not a page to fetch.
const problemType = "urn:errtrail:problem:"

// A problemKind is one of the api's error answers: its code, status, title
// and detail are fixed, so no answer can carry a request's value.
type problemKind struct {
	code   string
	status int
	title  string
	detail string
}

// The error answers. docs/openapi.yaml lists the codes (Problem.code enum);
// a test keeps the two equal.
var (
	probNotFound       = problemKind{"not-found", http.StatusNotFound, "Not found", "No stored error reply carries this id (within the agent, when one was given)."}
	probAmbiguous      = problemKind{"ambiguous-id", http.StatusMultipleChoices, "Ambiguous id", "The id matches several stored error replies: ask again with event_id set to one of the matches' event_id, or look the event_id up as the id."}
	probBadID          = problemKind{"bad-id", http.StatusBadRequest, "Unusable id", "The id cannot be an id errtrail stores."}
	probUnknownParam   = problemKind{"unknown-parameter", http.StatusBadRequest, "Unknown query parameter", "The request has a query parameter this route does not take."}
	probRepeatedParam  = problemKind{"repeated-parameter", http.StatusBadRequest, "Repeated query parameter", "A query parameter is given more than once."}
	probInvalidParam   = problemKind{"invalid-parameter", http.StatusBadRequest, "Invalid query parameter", "A query parameter's value is not one this route accepts."}
	probBadQuery       = problemKind{"bad-query", http.StatusBadRequest, "Malformed query string", "The query string cannot be parsed."}
	probInvalidRange   = problemKind{"invalid-range", http.StatusBadRequest, "Invalid time range", "from must be before to, and the range no longer than the route allows."}
	probUnauthorized   = problemKind{"unauthorized", http.StatusUnauthorized, "Unauthorized", ""}
	probNoRoute        = problemKind{"no-route", http.StatusNotFound, "No such route", "The API has no route at this path."}
	probMethod         = problemKind{"method-not-allowed", http.StatusMethodNotAllowed, "Method not allowed", "The API is read-only: GET and HEAD only."}
	probBodyTooLarge   = problemKind{"body-too-large", http.StatusRequestEntityTooLarge, "Request body too large", "The API's requests need no body."}
	probRateLimited    = problemKind{"rate-limited", http.StatusTooManyRequests, "Too many requests", "This client is over its request rate; retry after the Retry-After header's seconds."}
	probInternal       = problemKind{"internal", http.StatusInternalServerError, "Internal error", "The lookup failed; the api's log says why."}
	probUnavailable    = problemKind{"unavailable", http.StatusServiceUnavailable, "Store unavailable", "The error store cannot be asked right now; retry later."}
	probNotReady       = problemKind{"not-ready", http.StatusServiceUnavailable, "Not ready", "The error store cannot be asked right now."}
	probTimeout        = problemKind{"timeout", http.StatusGatewayTimeout, "Timed out", "The error store did not answer within the request timeout."}
	probUnknownAgent   = problemKind{"unknown-agent", http.StatusNotFound, "Unknown agent", "errtrail has stored no error reply of this agent."}
	probClientBusy     = problemKind{"too-many-concurrent", http.StatusTooManyRequests, "Too many requests at once", "This client already has its share of such requests running; retry after the Retry-After header's seconds."}
	probBusy           = problemKind{"busy", http.StatusServiceUnavailable, "Busy", "Too many such requests are running; none finished within the queue deadline. Retry after the Retry-After header's seconds."}
	problemKindsForDoc = []problemKind{probNotFound, probAmbiguous, probBadID, probUnknownParam, probRepeatedParam, probInvalidParam, probBadQuery, probInvalidRange, probUnauthorized, probNoRoute, probMethod, probBodyTooLarge, probRateLimited, probInternal, probUnavailable, probNotReady, probTimeout, probUnknownAgent, probClientBusy, probBusy}
)

// statusClientClosed is recorded (never sent) when the client went away
// before its answer was ready, as nginx does.
const statusClientClosed = 499

// problem is the RFC 9457 body. Parameter names one of the route's own
// parameters (never a name the client sent); Matches and Total come with
// ambiguous-id only.
type problem struct {
	Type      string         `json:"type"`
	Code      string         `json:"code"`
	Title     string         `json:"title"`
	Status    int            `json:"status"`
	Detail    string         `json:"detail,omitempty"`
	Parameter string         `json:"parameter,omitempty"`
	Matches   []lookup.Match `json:"matches,omitempty"`
	Total     *int           `json:"total,omitempty"` // of all matches; set with ambiguous-id only
}

func (k problemKind) body() *problem {
	return &problem{Type: problemType + k.code, Code: k.code, Title: k.title, Status: k.status, Detail: k.detail}
}

// writeProblem answers with p as application/problem+json.
func writeProblem(w http.ResponseWriter, p *problem) {
	writeJSON(w, p.Status, "application/problem+json", p)
}

// writeJSON answers status with v encoded as JSON.
func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	b, err := json.Marshal(v)
	if err != nil { // the api's own types always encode; be safe anyway
		status, contentType = http.StatusInternalServerError, "application/problem+json"
		b, _ = json.Marshal(probInternal.body())
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
