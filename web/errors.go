package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/errtrail/errtrail/lookup"
)

// searchedColumns are the id columns a lookup searches, as the not-found
// page names them (lookup.Story.MatchedAs has the same names).
var searchedColumns = []string{"error_id", "request_id", "http_request_id", "event_id", "message_id", "task_id"}

// errorsPage serves /errors: the story of one id when the query has id, else
// the list of recent errors that agent, caller and kind select.
func (h *handler) errorsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if _, ok := q["id"]; ok {
		h.story(w, r, q)
		return
	}
	h.list(w, r, q)
}

func (h *handler) story(w http.ResponseWriter, r *http.Request, q url.Values) {
	id := strings.TrimSpace(q.Get("id"))
	opt := lookup.FindOptions{Agent: strings.TrimSpace(q.Get("agent")), EventID: strings.TrimSpace(q.Get("event_id"))}
	f := form{ID: id, Agent: opt.Agent}
	if id == "" {
		h.renderForm(w, r, http.StatusBadRequest, "badid", f, badIDPage{Reason: "the id is empty: paste the id from the ticket"})
		return
	}
	if h.svc == nil {
		h.unavailable(w, r, f, "the lookup", nil)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	s, err := h.svc.Story(ctx, id, opt)
	var amb *lookup.AmbiguousError
	var bad *lookup.BadIDError
	switch {
	case err == nil && s != nil:
		h.renderForm(w, r, http.StatusOK, "story", f, h.storyPage(s))
	case errors.Is(err, lookup.ErrNotFound):
		h.renderForm(w, r, http.StatusNotFound, "notfound", f, notFoundPage{
			Columns: searchedColumns, Agent: opt.Agent != "", EventID: opt.EventID != "",
		})
	case errors.As(err, &amb):
		h.renderForm(w, r, http.StatusMultipleChoices, "ambiguous", f, ambiguousPage{Matches: amb.Matches, Total: amb.Total, Replies: amb.Replies})
	case errors.As(err, &bad):
		h.renderForm(w, r, http.StatusBadRequest, "badid", f, badIDPage{Reason: bad.Reason})
	case isUnavailable(err):
		h.unavailable(w, r, f, "the lookup", err)
	case err == nil:
		h.failed(w, r, f, errors.New("web: Story returned neither a story nor an error"))
	default:
		h.failed(w, r, f, err)
	}
}

type notFoundPage struct {
	Columns []string
	Agent   bool // the search was narrowed to an agent
	EventID bool // and to an event_id
}

func (notFoundPage) PageTitle() string { return "No error reply found" }

type ambiguousPage struct {
	Matches []lookup.Match
	Total   int // records
	Replies int // distinct replies among them (0: not known)
}

func (ambiguousPage) PageTitle() string { return "Several error replies match" }

type badIDPage struct{ Reason string }

func (badIDPage) PageTitle() string { return "Not a usable id" }
