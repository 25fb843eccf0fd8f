package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/report"
)

// Default ranges when from and to are not given.
const (
	defaultListRange   = time.Hour
	defaultReportRange = 24 * time.Hour
)

// maxValueLen bounds a text parameter (an agent, a caller, an event id, a
// cursor): longer cannot be a stored value.
const maxValueLen = 1024

// kinds are the values the kind parameter takes: parse's verdict classes.
var kinds = []parse.Kind{parse.KindQuota, parse.KindOverload, parse.KindInvalid, parse.KindAuth, parse.KindNotFound,
	parse.KindConflict, parse.KindUnsupported, parse.KindInternal, parse.KindUnknown}

func (s *Server) serveStory(w *recorder, r *request) {
	opt := lookup.FindOptions{Agent: r.param("agent"), EventID: r.param("event_id")}
	if name := firstBadText(r, "agent", "event_id"); name != "" {
		writeProblem(w, invalidParam(name))
		return
	}
	id := r.pathValue("id")
	v, err := s.await(r, func(ctx context.Context) (any, error) { return s.svc.Story(ctx, id, opt) })
	if err != nil {
		s.fail(w, r, err, id)
		return
	}
	st, _ := v.(*lookup.Story)
	if st == nil {
		s.fail(w, r, errors.New("lookup returned no story and no error"), id)
		return
	}
	writeJSON(w, http.StatusOK, "application/json", st)
}

func (s *Server) serveList(w *recorder, r *request) {
	q := lookup.ListQuery{Agent: r.param("agent"), Caller: r.param("caller"), Kind: r.param("kind"),
		Cursor: r.param("cursor"), Limit: lookup.DefaultListLimit}
	if name := firstBadText(r, "agent", "caller", "cursor"); name != "" {
		writeProblem(w, invalidParam(name))
		return
	}
	if q.Kind != "" && !slices.Contains(kinds, parse.Kind(q.Kind)) {
		writeProblem(w, invalidParam("kind"))
		return
	}
	if v := r.param("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > lookup.MaxListLimit {
			writeProblem(w, invalidParam("limit"))
			return
		}
		q.Limit = n
	}
	var prob *problem
	if q.From, q.To, prob = s.timeRange(r, defaultListRange, lookup.MaxListRange); prob != nil {
		writeProblem(w, prob)
		return
	}
	v, err := s.await(r, func(ctx context.Context) (any, error) { return s.svc.List(ctx, q) })
	if err != nil {
		s.fail(w, r, err, "")
		return
	}
	p, _ := v.(*lookup.Page)
	if p == nil {
		s.fail(w, r, errors.New("lookup returned no page and no error"), "")
		return
	}
	if p.Errors == nil {
		p.Errors = []lookup.Match{}
	}
	writeJSON(w, http.StatusOK, "application/json", p)
}

// serveReport serves both report routes: /v1/report is every agent's.
func (s *Server) serveReport(w *recorder, r *request) {
	agent := ""
	if slices.Contains(r.route.pathParams(), "agent") {
		agent = r.pathValue("agent")
		if !textValue(agent) {
			writeProblem(w, invalidParam("agent"))
			return
		}
	}
	from, to, prob := s.timeRange(r, defaultReportRange, report.MaxRange)
	if prob == nil && report.CheckRange(from, to) != nil { // before 1970, past ClickHouse's DateTime
		prob = probInvalidRange.body()
	}
	if prob != nil {
		writeProblem(w, prob)
		return
	}
	v, err := s.await(r, func(ctx context.Context) (any, error) { return s.rep.Report(ctx, agent, from, to) })
	if err != nil {
		s.fail(w, r, err, agent)
		return
	}
	rep, _ := v.(*report.Report)
	if rep == nil {
		s.fail(w, r, errors.New("reporter returned no report and no error"), agent)
		return
	}
	writeJSON(w, http.StatusOK, "application/json", rep)
}

func (s *Server) serveHealth(w *recorder, _ *request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("ok\n"))
}

// serveReady answers 200 while the lookup service is ready, else 503
// (also when the check outlasts the request timeout).
func (s *Server) serveReady(w *recorder, r *request) {
	_, err := s.await(r, func(ctx context.Context) (any, error) { return nil, s.svc.Ready(ctx) })
	if err != nil {
		w.err = err
		writeProblem(w, probNotReady.body())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("ready\n"))
}

func (s *Server) serveMetrics(w *recorder, r *request) { s.promh.ServeHTTP(w, r.Request) }

// await runs f under the request timeout and returns its result, or the
// context's error as soon as the deadline passes or the client leaves,
// even if f does not heed its context (f then finishes on its own).
func (s *Server) await(r *request, f func(context.Context) (any, error)) (any, error) {
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	type result struct {
		v   any
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("panic in lookup: %v", p)}
			}
		}()
		v, err := f(ctx)
		done <- result{v, err}
	}()
	select {
	case res := <-done:
		if res.err != nil && ctx.Err() != nil {
			return nil, ctx.Err() // the store gave up because the deadline passed
		}
		return res.v, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fail answers a lookup's error. id is what the client asked about (the
// path's id or agent): a reason that contains it is dropped, so that an
// answer never repeats it whatever the store says.
func (s *Server) fail(w *recorder, r *request, err error, id string) {
	var (
		amb   *lookup.AmbiguousError
		bad   *lookup.BadIDError
		unav  *lookup.UnavailableError
		rng   *report.BadRangeError
		p     *problem
		isErr = true // the log should say why
	)
	switch {
	case r.Context().Err() != nil:
		w.status = statusClientClosed // nothing to write: no one reads it
		return
	case errors.Is(err, context.DeadlineExceeded):
		p = probTimeout.body()
	case errors.Is(err, lookup.ErrNotFound):
		p, isErr = probNotFound.body(), false
	case errors.As(err, &amb):
		p, isErr = probAmbiguous.body(), false
		total := max(amb.Total, len(amb.Matches))
		p.Matches, p.Total = amb.Matches, &total
	case errors.As(err, &bad):
		p, isErr = probBadID.body(), false
		if reason := bad.Reason; reason != "" && (id == "" || !strings.Contains(reason, id)) && textValue(reason) {
			p.Detail = "The id cannot be an id errtrail stores: " + reason + "."
		}
	case errors.As(err, &rng): // its message quotes the range: not repeated
		p, isErr = probInvalidRange.body(), false
	case errors.As(err, &unav):
		p = probUnavailable.body()
	default:
		p = probInternal.body()
	}
	if isErr {
		w.err = err
	}
	writeProblem(w, p)
}

// timeRange reads from and to (RFC 3339). Without to the range ends now;
// without from it starts def before its end. It must not be empty or
// longer than max.
func (s *Server) timeRange(r *request, def, max time.Duration) (from, to time.Time, _ *problem) {
	to = s.now().UTC()
	if v := r.param("to"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return from, to, invalidParam("to")
		}
		to = t.UTC()
	}
	from = to.Add(-def)
	if v := r.param("from"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return from, to, invalidParam("from")
		}
		from = t.UTC()
	}
	if !from.Before(to) || to.Sub(from) > max {
		return from, to, probInvalidRange.body()
	}
	return from, to, nil
}

// firstBadText returns the first of the named parameters whose value is
// not a text value, or "".
func firstBadText(r *request, names ...string) string {
	for _, n := range names {
		if !textValue(r.param(n)) {
			return n
		}
	}
	return ""
}

func invalidParam(name string) *problem {
	p := probInvalidParam.body()
	p.Parameter = name
	return p
}

// textValue reports whether v can be a stored text value: valid UTF-8, not
// too long, no control characters.
func textValue(v string) bool {
	if len(v) > maxValueLen || !utf8.ValidString(v) {
		return false
	}
	return strings.IndexFunc(v, unicode.IsControl) < 0
}
