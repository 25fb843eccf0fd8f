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

	"github.com/errtrail/errtrail/internal/cmdkit"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/report"
)

// Default ranges when from and to are not given.
const (
	defaultListRange   = time.Hour
	DefaultReportRange = 24 * time.Hour // the report's, for errtrail mcp too
)

// maxValueLen bounds a text parameter (an agent, a caller, an event id):
// longer cannot be a stored value. A cursor is bounded by
// lookup.MaxCursorLen.
const maxValueLen = lookup.MaxIDLen

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
	if name := firstBadText(r, "agent", "caller"); name != "" {
		writeProblem(w, invalidParam(name))
		return
	}
	if len(q.Cursor) > lookup.MaxCursorLen || !TextValue(q.Cursor, lookup.MaxCursorLen) {
		writeProblem(w, invalidParam("cursor"))
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
	if q.Cursor != "" {
		// The cursor holds the range of the first page: a time given
		// with it must be the cursor's, one not given is the cursor's
		// (a default "now" would be another range).
		var prob *problem
		if q.From, prob = parseTime(r, "from"); prob == nil {
			q.To, prob = parseTime(r, "to")
		}
		if prob != nil {
			writeProblem(w, prob)
			return
		}
	} else {
		var prob *problem
		if q.From, q.To, prob = s.timeRange(r, defaultListRange, lookup.MaxListRange); prob != nil {
			writeProblem(w, prob)
			return
		}
		if _, err := lookup.CheckList(q); err != nil {
			s.fail(w, r, err, "")
			return
		}
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
		if !TextValue(agent, maxValueLen) {
			writeProblem(w, invalidParam("agent"))
			return
		}
	}
	from, to, prob := s.timeRange(r, DefaultReportRange, report.MaxRange)
	if prob == nil && report.CheckRange(from, to) != nil { // cannot be: timeRange checks the same
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

func (s *Server) serveHealth(w *recorder, _ *request) { cmdkit.WriteHealthy(w) }

// serveReady answers 200 while the lookup service is ready, else 503
// (also when the check outlasts the request timeout).
func (s *Server) serveReady(w *recorder, r *request) {
	_, err := s.await(r, func(ctx context.Context) (any, error) { return nil, s.svc.Ready(ctx) })
	if err != nil {
		w.err = err
		writeProblem(w, probNotReady.body())
		return
	}
	cmdkit.WriteReady(w, "")
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
		bq    *lookup.BadQueryError
		busy  *busyError
		p     *problem
		isErr = true // the log should say why
	)
	switch {
	case r.Context().Err() != nil:
		w.status = statusClientClosed // nothing to write: no one reads it
		return
	case errors.Is(err, context.DeadlineExceeded):
		p = probTimeout.body()
	case errors.As(err, &busy):
		p, isErr = probBusy.body(), false
		if busy.perClient {
			p = probClientBusy.body()
		}
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter(busy.retryAfter)))
	case errors.Is(err, lookup.ErrNotFound):
		p, isErr = probNotFound.body(), false
	case errors.Is(err, report.ErrUnknownAgent):
		p, isErr = probUnknownAgent.body(), false
	case errors.As(err, &amb):
		p, isErr = probAmbiguous.body(), false
		total := max(amb.Total, len(amb.Matches))
		p.Matches, p.Total = amb.Matches, &total
	case errors.As(err, &bad):
		p, isErr = probBadID.body(), false
		if reason := bad.Reason; reason != "" && (id == "" || !strings.Contains(reason, id)) && TextValue(reason, 1024) {
			p.Detail = "The id cannot be an id errtrail stores: " + reason + "."
		}
	case errors.As(err, &rng): // its message quotes the range: not repeated
		p, isErr = probInvalidRange.body(), false
	case errors.As(err, &bq): // its reason is not passed on: the parameter is named
		p, isErr = probInvalidRange.body(), false
		if slices.Contains(r.route.query, bq.Param) {
			p = invalidParam(bq.Param)
		}
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
// longer than max, nor outside what ClickHouse's DateTime holds.
func (s *Server) timeRange(r *request, def, max time.Duration) (from, to time.Time, _ *problem) {
	from, prob := parseTime(r, "from")
	if prob != nil {
		return from, to, prob
	}
	if to, prob = parseTime(r, "to"); prob != nil {
		return from, to, prob
	}
	if to.IsZero() {
		to = s.now().UTC()
	}
	if from.IsZero() {
		from = to.Add(-def)
	}
	if from.Before(lookup.MinListTime) || !from.Before(to) || to.Sub(from) > max { // a default from can be before 1970
		return from, to, probInvalidRange.body()
	}
	return from, to, nil
}

// parseTime reads the time parameter name: RFC 3339, from 1970 to 2106
// (ClickHouse's DateTime). Not given, it returns the zero time.
func parseTime(r *request, name string) (time.Time, *problem) {
	v := r.param(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil || t.Before(lookup.MinListTime) || t.After(lookup.MaxListTime) {
		return time.Time{}, invalidParam(name)
	}
	return t.UTC(), nil
}

// firstBadText returns the first of the named parameters whose value is
// not a text value, or "".
func firstBadText(r *request, names ...string) string {
	for _, n := range names {
		if !TextValue(r.param(n), maxValueLen) {
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

// TextValue reports whether v can be a stored text value: valid UTF-8, at
// most max bytes, no control characters (nor U+2028, U+2029). errtrail mcp
// checks its arguments with it too.
func TextValue(v string, max int) bool {
	if len(v) > max || !utf8.ValidString(v) {
		return false
	}
	return strings.IndexFunc(v, func(c rune) bool { return unicode.IsControl(c) || c == '\u2028' || c == '\u2029' }) < 0
}
