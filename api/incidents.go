package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/lookup"
)

// The range of /v1/incidents: 7 days by default, 90 (the table's
// retention) at most.
const (
	DefaultIncidentRange = 7 * 24 * time.Hour
	MaxIncidentRange     = 90 * 24 * time.Hour
	MaxIncidentLimit     = 1000
	DefaultIncidentLimit = 200
)

// IncidentList is the answer of /v1/incidents.
type IncidentList struct {
	Incidents []incidents.Incident `json:"incidents"`
	From      time.Time            `json:"from"`
	To        time.Time            `json:"to"`
}

func (s *Server) serveIncidents(w *recorder, r *request) {
	f := incidents.Filter{Agent: r.param("agent"), Limit: DefaultIncidentLimit}
	if name := firstBadText(r, "agent"); name != "" {
		writeProblem(w, invalidParam(name))
		return
	}
	if v := r.param("kind"); v != "" {
		k, err := incidents.ParseKind(v)
		if err != nil {
			writeProblem(w, invalidParam("kind"))
			return
		}
		f.Kind = k
	}
	if v := r.param("open"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeProblem(w, invalidParam("open"))
			return
		}
		f.OpenOnly = b
	}
	if v := r.param("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxIncidentLimit {
			writeProblem(w, invalidParam("limit"))
			return
		}
		f.Limit = n
	}
	var prob *problem
	if f.From, f.To, prob = s.timeRange(r, DefaultIncidentRange, MaxIncidentRange); prob != nil {
		writeProblem(w, prob)
		return
	}
	if s.cfg.Incidents == nil {
		s.fail(w, r, &lookup.UnavailableError{Err: errors.New("no incidents store configured")}, "")
		return
	}
	v, err := s.await(r, func(ctx context.Context) (any, error) { return s.cfg.Incidents.Incidents(ctx, f) })
	if errors.Is(err, incidents.ErrBadFilter) { // cannot be: the parameters are checked above
		writeProblem(w, probInvalidRange.body())
		return
	}
	if err != nil {
		s.fail(w, r, err, "")
		return
	}
	list, _ := v.([]incidents.Incident)
	if list == nil {
		list = []incidents.Incident{}
	}
	writeJSON(w, http.StatusOK, "application/json", IncidentList{Incidents: list, From: f.From, To: f.To})
}
