package api

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/lookup"
)

// The range of /v1/agents/{agent}/groups (and of errtrail mcp's groups
// tool): 7 days by default, 90 (the hourly rollup's retention) at most.
const (
	DefaultGroupRange = 7 * 24 * time.Hour
	MaxGroupRange     = 90 * 24 * time.Hour
	maxGroupLimit     = 1000
	defaultGroupLimit = 200
	maxGroupCursorLen = 64
)

// GroupList is the answer of /v1/agents/{agent}/groups.
type GroupList struct {
	Agent  string         `json:"agent"`
	Groups []groups.Group `json:"groups"`
	From   time.Time      `json:"from"`
	To     time.Time      `json:"to"`
	// Next continues the list after its last group (same from and
	// to); absent on the last page.
	Next string `json:"next,omitempty"`
}

func (s *Server) serveGroups(w *recorder, r *request) {
	agent := r.pathValue("agent")
	if !TextValue(agent, maxValueLen) || agent == "" {
		writeProblem(w, invalidParam("agent"))
		return
	}
	f := groups.Filter{Agent: agent, ID: r.param("group"), Version: r.param("version")}
	if name := firstBadText(r, "group", "version"); name != "" {
		writeProblem(w, invalidParam(name))
		return
	}
	if v := r.param("new"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeProblem(w, invalidParam("new"))
			return
		}
		f.NewOnly = b
	}
	limit := defaultGroupLimit
	if v := r.param("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxGroupLimit {
			writeProblem(w, invalidParam("limit"))
			return
		}
		limit = n
	}
	after, ok := parseGroupCursor(r.param("cursor"))
	if !ok {
		writeProblem(w, invalidParam("cursor"))
		return
	}
	var prob *problem
	if f.From, f.To, prob = s.timeRange(r, DefaultGroupRange, MaxGroupRange); prob != nil {
		writeProblem(w, prob)
		return
	}
	f.Now = s.now().UTC()
	if f.To.Before(f.Now) {
		f.Now = f.To
	}
	if s.cfg.Groups == nil {
		s.fail(w, r, &lookup.UnavailableError{Err: errors.New("no groups store configured")}, agent)
		return
	}
	v, err := s.await(r, func(ctx context.Context) (any, error) { return s.cfg.Groups.Groups(ctx, f) })
	if errors.Is(err, groups.ErrBadFilter) { // cannot be: the parameters are checked above
		writeProblem(w, probInvalidRange.body())
		return
	}
	if err != nil {
		s.fail(w, r, err, agent)
		return
	}
	list, _ := v.([]groups.Group)
	page := []groups.Group{}
	for _, g := range list {
		if after.set && !after.before(g) {
			continue
		}
		page = append(page, g)
	}
	out := GroupList{Agent: agent, From: f.From, To: f.To, Groups: page}
	if len(page) > limit {
		out.Groups = page[:limit]
		last := page[limit-1]
		out.Next = groupCursor(last)
	}
	writeJSON(w, http.StatusOK, "application/json", out)
}

// groupPos is a position in the list's order (last seen, latest first;
// then id).
type groupPos struct {
	set  bool
	last int64
	id   string
}

// before reports whether the position comes before g in the list's order.
func (p groupPos) before(g groups.Group) bool {
	l := g.LastSeen.Unix()
	return l < p.last || l == p.last && g.ID > p.id
}

func groupCursor(g groups.Group) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(g.LastSeen.Unix(), 10) + "." + g.ID))
}

func parseGroupCursor(s string) (groupPos, bool) {
	if s == "" {
		return groupPos{}, true
	}
	if len(s) > maxGroupCursorLen {
		return groupPos{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return groupPos{}, false
	}
	ts, id, ok := strings.Cut(string(b), ".")
	n, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil || len(id) != 16 || strings.Trim(id, "0123456789abcdef") != "" {
		return groupPos{}, false
	}
	return groupPos{set: true, last: n, id: id}, true
}
