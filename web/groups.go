package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/lookup"
)

// Groups page ranges: 7 days by default, 90 (the hourly rollup's
// retention) at most; at most this many groups drawn.
const (
	DefaultGroupRange = 7 * 24 * time.Hour
	MaxGroupRange     = 90 * 24 * time.Hour
	maxGroupsShown    = 200
)

// groupsPage is one agent's error groups over a range, as a per-hour chart
// and a table.
type groupsPage struct {
	Agent     string
	From, To  string // the range as the form shows it
	NewOnly   bool
	Version   string
	Group     string
	Chart     hourChart
	Rows      []groupRow
	Truncated bool
}

type groupRow struct {
	groups.Group
	Story string // the story of its example
}

func (p groupsPage) PageTitle() string { return "Error groups of " + p.Agent }

// GroupsURL is the address of the groups page of agent, with only the new
// ones when newOnly, or only the group of id groupID ("" every group).
// Alert annotations link to it.
func GroupsURL(externalURL, agent, groupID string, newOnly bool) string {
	v := url.Values{}
	if groupID != "" {
		v.Set("group", groupID)
	}
	if newOnly {
		v.Set("new", "true")
	}
	u := strings.TrimRight(externalURL, "/") + "/agents/" + url.PathEscape(agent) + "/groups"
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

func (h *handler) groupsPage(w http.ResponseWriter, r *http.Request) {
	agent := r.PathValue("agent")
	if strings.TrimSpace(agent) == "" {
		h.badRequest(w, r, "the address names no agent")
		return
	}
	if len(agent) > lookup.MaxIDLen {
		h.badRequest(w, r, "agent is longer than any stored agent")
		return
	}
	v := r.URL.Query()
	f := groups.Filter{Agent: agent, Version: strings.TrimSpace(v.Get("version")), ID: strings.TrimSpace(v.Get("group"))}
	if len(f.Version) > lookup.MaxIDLen || len(f.ID) > lookup.MaxIDLen {
		h.badRequest(w, r, "version or group is longer than any stored one")
		return
	}
	if s := strings.TrimSpace(v.Get("new")); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			h.badRequest(w, r, "new must be true or false")
			return
		}
		f.NewOnly = b
	}
	var err error
	if f.From, f.To, err = parseRange(v, h.cfg.Now(), DefaultGroupRange, MaxGroupRange); err != nil {
		h.badRequest(w, r, err.Error())
		return
	}
	f.Now = h.cfg.Now().UTC()
	if f.To.Before(f.Now) {
		f.Now = f.To
	}
	if h.grp == nil {
		h.unavailable(w, r, form{}, "the error groups", nil)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	list, err := h.grp.Groups(ctx, f)
	switch {
	case err == nil:
	case errors.Is(err, groups.ErrBadFilter):
		h.badRequest(w, r, "the range is not valid: from must be before to")
		return
	case isUnavailable(err):
		h.unavailable(w, r, form{}, "the error groups", err)
		return
	default:
		h.failed(w, r, form{}, err)
		return
	}
	p := groupsPage{Agent: agent, NewOnly: f.NewOnly, Version: f.Version, Group: f.ID,
		From: f.From.UTC().Format(time.RFC3339), To: f.To.UTC().Format(time.RFC3339)}
	if len(list) > maxGroupsShown {
		list, p.Truncated = list[:maxGroupsShown], true
	}
	p.Chart = newHourChart(list, f.From, f.To)
	for _, g := range list {
		row := groupRow{Group: g}
		if g.Example != "" {
			row.Story = StoryURL(h.links.base, g.Example, lookup.FindOptions{Agent: g.Agent})
		}
		p.Rows = append(p.Rows, row)
	}
	h.render(w, r, http.StatusOK, "groups", p)
}
