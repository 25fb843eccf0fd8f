package groups

import (
	"fmt"
	"time"
)

// History is what Classify needs to know of the agent and of the group
// beyond the group's own figures.
type History struct {
	// AgentFirst is the agent's first error in the rollup, of any group.
	AgentFirst time.Time
	// AgentVersions is when the agent was first seen with each version,
	// of any group.
	AgentVersions map[string]time.Time
	// PrevHour is the group's last hour with errors before the hour that
	// holds now-Window (zero: none); RecentHour its first hour with errors
	// from then on (zero: none).
	PrevHour, RecentHour time.Time
}

// Classify returns what is news about g at now, and why in words.
func Classify(g Group, h History, now time.Time) (State, string) {
	if g.Kind == KindQuota {
		return Seen, ""
	}
	since := now.Add(-Window)
	if !g.FirstSeen.Before(since) {
		if !h.AgentFirst.IsZero() && !h.AgentFirst.After(g.FirstSeen.Add(-Window)) {
			return New, fmt.Sprintf("first seen %s", g.FirstSeen.UTC().Format(time.RFC3339))
		}
		return Seen, ""
	}
	if g.LastSeen.Before(since) {
		return Seen, ""
	}
	// Back after a silence: the hours between its last hour before the
	// recent ones and its first recent hour held none of its errors.
	if !h.PrevHour.IsZero() && !h.RecentHour.IsZero() {
		if gap := h.RecentHour.Sub(h.PrevHour.Add(time.Hour)); gap >= Silence {
			return Regression, fmt.Sprintf("back after %s without an error (last before: %s)",
				words(gap), h.PrevHour.Add(time.Hour).UTC().Format(time.RFC3339))
		}
	}
	// In a newer version after a version that did not have it.
	var prior []Version // versions it had before the window
	var priorLast time.Time
	for _, v := range g.Versions {
		if v.FirstSeen.Before(since) {
			prior = append(prior, v)
			if v.LastSeen.After(priorLast) {
				priorLast = v.LastSeen
			}
		}
	}
	top := ""
	for _, v := range prior {
		if !IsVersion(v.Version) {
			continue
		}
		if c, _ := CompareVersions(v.Version, top); top == "" || c > 0 {
			top = v.Version
		}
	}
	if top == "" {
		return Seen, ""
	}
	for _, v := range g.Versions {
		if v.FirstSeen.Before(since) {
			continue
		}
		if c, ok := CompareVersions(v.Version, top); !ok || c <= 0 {
			continue // an old release, or no version: not a regression
		}
		// The group was quiet for an hour before this version raised it
		// and, in that time, the agent ran a version newer than its last
		// one without raising it.
		if priorLast.After(v.FirstSeen.Add(-Window)) {
			continue
		}
		for w, first := range h.AgentVersions {
			cw, ok := CompareVersions(w, top)
			cv, _ := CompareVersions(w, v.Version)
			if ok && cw > 0 && cv <= 0 && !first.After(v.FirstSeen.Add(-Window)) {
				return Regression, fmt.Sprintf("seen again in %s; %s ran without it from %s (last seen with %s)",
					v.Version, w, first.UTC().Format(time.RFC3339), top)
			}
		}
	}
	return Seen, ""
}

// words says a duration in hours or days.
func words(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	}
	return fmt.Sprintf("%d hours", int(d/time.Hour))
}
