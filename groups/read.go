package groups

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// The tables the reads use (schema.TableErrorGroups, schema.TableErrorGroups1h).
const (
	Table   = "error_groups"
	Table1h = "error_groups_1h"
)

// ErrBadFilter wraps a filter that cannot be read.
var ErrBadFilter = errors.New("groups: bad filter")

// Filter selects the groups of one agent.
type Filter struct {
	Agent string
	// From and To: the groups seen at some moment of [From, To), and the
	// hours of the chart. Both required.
	From, To time.Time
	// Now is the moment State is decided at (default: To).
	Now time.Time
	// NewOnly keeps the groups whose State is New.
	NewOnly bool
	// Version keeps the groups seen with that agent version.
	Version string
	// ID keeps the one group of that id.
	ID string
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Read returns the groups of f.Agent seen in [f.From, f.To), the latest
// seen first, each with its versions, its hours in the range and its State
// at f.Now. It reads the two rollups by the agent (their sorting key's
// first column): four queries whose cost grows with the agent's groups
// and hours, not with its errors. Values reach the SQL as bound
// parameters. It runs on ClickHouse 18.16 and current releases.
func Read(ctx context.Context, conn driver.Conn, db string, f Filter) ([]Group, error) {
	if !identRE.MatchString(db) {
		return nil, fmt.Errorf("%w: database name %q is not a plain identifier", ErrBadFilter, db)
	}
	if f.Agent == "" {
		return nil, fmt.Errorf("%w: no agent", ErrBadFilter)
	}
	if f.From.IsZero() || f.To.IsZero() || !f.From.Before(f.To) {
		return nil, fmt.Errorf("%w: from %s is not before to %s", ErrBadFilter, f.From.UTC().Format(time.RFC3339), f.To.UTC().Format(time.RFC3339))
	}
	now := f.Now
	if now.IsZero() {
		now = f.To
	}
	byKey := map[Key]*Group{}
	agentVersions := map[string]time.Time{}
	var agentFirst time.Time

	// Per group and version: count, first and last seen.
	rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT protocol, code, kind, method, source_version,
    countMerge(n), minMerge(first_seen), maxMerge(last_seen)
FROM %s.%s
WHERE agent = ?
GROUP BY protocol, code, kind, method, source_version`, db, Table), f.Agent)
	if err != nil {
		return nil, fmt.Errorf("groups: read: %w", err)
	}
	for rows.Next() {
		k := Key{Agent: f.Agent}
		var v Version
		if err := rows.Scan(&k.Protocol, &k.Code, &k.Kind, &k.Method, &v.Version, &v.Count, &v.FirstSeen, &v.LastSeen); err != nil {
			rows.Close()
			return nil, fmt.Errorf("groups: read: %w", err)
		}
		v.FirstSeen, v.LastSeen = v.FirstSeen.UTC(), v.LastSeen.UTC()
		g := byKey[k]
		if g == nil {
			g = &Group{ID: k.ID(), Key: k, FirstSeen: v.FirstSeen, LastSeen: v.LastSeen}
			byKey[k] = g
		}
		g.Versions = append(g.Versions, v)
		g.Count += v.Count
		if v.FirstSeen.Before(g.FirstSeen) {
			g.FirstSeen = v.FirstSeen
		}
		if v.LastSeen.After(g.LastSeen) {
			g.LastSeen = v.LastSeen
		}
		if agentFirst.IsZero() || v.FirstSeen.Before(agentFirst) {
			agentFirst = v.FirstSeen
		}
		if t, ok := agentVersions[v.Version]; !ok || v.FirstSeen.Before(t) {
			agentVersions[v.Version] = v.FirstSeen
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("groups: read: %w", err)
	}
	// Keep the groups seen in the range (and of the filter) before the
	// other reads.
	keep := map[Key]*Group{}
	for k, g := range byKey {
		if g.LastSeen.Before(f.From) || !g.FirstSeen.Before(f.To) {
			continue
		}
		if f.ID != "" && g.ID != f.ID {
			continue
		}
		if f.Version != "" && !slices.ContainsFunc(g.Versions, func(v Version) bool { return v.Version == f.Version }) {
			continue
		}
		keep[k] = g
	}
	if len(keep) == 0 {
		return []Group{}, nil
	}

	// Distinct callers and the example, over every version.
	rows, err = conn.Query(ctx, fmt.Sprintf(`SELECT protocol, code, kind, method, uniqMerge(callers), argMaxMerge(example)
FROM %s.%s
WHERE agent = ?
GROUP BY protocol, code, kind, method`, db, Table), f.Agent)
	if err != nil {
		return nil, fmt.Errorf("groups: read: %w", err)
	}
	for rows.Next() {
		k := Key{Agent: f.Agent}
		var callers uint64
		var example string
		if err := rows.Scan(&k.Protocol, &k.Code, &k.Kind, &k.Method, &callers, &example); err != nil {
			rows.Close()
			return nil, fmt.Errorf("groups: read: %w", err)
		}
		if g := keep[k]; g != nil {
			g.Callers, g.Example = callers, example
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("groups: read: %w", err)
	}

	// Hours: those of the range for the chart; for the State, the last
	// hour with errors before the window and the first one in it.
	recent := now.Add(-Window).Truncate(time.Hour)
	hist := map[Key]*History{}
	rows, err = conn.Query(ctx, fmt.Sprintf(`SELECT protocol, code, kind, method,
    maxIf(hour, hour < toDateTime(?)), minIf(hour, hour >= toDateTime(?)), countIf(hour >= toDateTime(?))
FROM %s.%s
WHERE agent = ? AND hour <= toDateTime(?)
GROUP BY protocol, code, kind, method`, db, Table1h), recent.Unix(), recent.Unix(), recent.Unix(), f.Agent, now.Unix())
	if err != nil {
		return nil, fmt.Errorf("groups: read: %w", err)
	}
	for rows.Next() {
		k := Key{Agent: f.Agent}
		var prev, first time.Time
		var nRecent uint64
		if err := rows.Scan(&k.Protocol, &k.Code, &k.Kind, &k.Method, &prev, &first, &nRecent); err != nil {
			rows.Close()
			return nil, fmt.Errorf("groups: read: %w", err)
		}
		h := &History{}
		if prev.Unix() > 0 {
			h.PrevHour = prev.UTC()
		}
		if nRecent > 0 {
			h.RecentHour = first.UTC()
		}
		hist[k] = h
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("groups: read: %w", err)
	}
	rows, err = conn.Query(ctx, fmt.Sprintf(`SELECT protocol, code, kind, method, hour, sum(n)
FROM %s.%s
WHERE agent = ? AND hour >= toDateTime(?) AND hour < toDateTime(?)
GROUP BY protocol, code, kind, method, hour
ORDER BY hour`, db, Table1h), f.Agent, f.From.Truncate(time.Hour).Unix(), f.To.Unix())
	if err != nil {
		return nil, fmt.Errorf("groups: read: %w", err)
	}
	for rows.Next() {
		k := Key{Agent: f.Agent}
		var h Hour
		if err := rows.Scan(&k.Protocol, &k.Code, &k.Kind, &k.Method, &h.Hour, &h.Count); err != nil {
			rows.Close()
			return nil, fmt.Errorf("groups: read: %w", err)
		}
		if g := keep[k]; g != nil {
			h.Hour = h.Hour.UTC()
			g.Hours = append(g.Hours, h)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("groups: read: %w", err)
	}

	out := make([]Group, 0, len(keep))
	for k, g := range keep {
		h := History{AgentFirst: agentFirst, AgentVersions: agentVersions}
		if x := hist[k]; x != nil {
			h.PrevHour, h.RecentHour = x.PrevHour, x.RecentHour
		}
		g.State, g.Why = Classify(*g, h, now)
		if f.NewOnly && g.State != New {
			continue
		}
		sortVersions(g.Versions)
		if g.Hours == nil {
			g.Hours = []Hour{}
		}
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].LastSeen.Equal(out[j].LastSeen) {
			return out[i].LastSeen.After(out[j].LastSeen)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// sortVersions orders versions newest first; those that are not versions
// follow, by name.
func sortVersions(vs []Version) {
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := vs[i].Version, vs[j].Version
		c, ok := CompareVersions(a, b)
		switch {
		case ok:
			return c > 0
		case IsVersion(a) != IsVersion(b):
			return IsVersion(a)
		}
		return strings.Compare(a, b) < 0
	})
}

// NewGroup is a group that is new at some moment, as the alerter reports it.
type NewGroup struct {
	ID string
	Key
	FirstSeen time.Time
}

// NewAt returns the groups of every agent that are New at now (quota
// never): first seen in [now-Window, now] on an agent first seen at least
// Window before. Two small reads of error_groups (a few rows per group),
// for the alerter's evaluation.
func NewAt(ctx context.Context, conn driver.Conn, db string, now time.Time) ([]NewGroup, error) {
	if !identRE.MatchString(db) {
		return nil, fmt.Errorf("%w: database name %q is not a plain identifier", ErrBadFilter, db)
	}
	since := now.Add(-Window)
	rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT agent, protocol, code, kind, method, minMerge(first_seen) AS f
FROM %s.%s
WHERE kind != ?
GROUP BY agent, protocol, code, kind, method
HAVING f >= toDateTime(?) AND f <= toDateTime(?)`, db, Table), KindQuota, since.Unix(), now.Unix())
	if err != nil {
		return nil, fmt.Errorf("groups: new: %w", err)
	}
	var cand []NewGroup
	agents := map[string]bool{}
	for rows.Next() {
		var g NewGroup
		if err := rows.Scan(&g.Agent, &g.Protocol, &g.Code, &g.Kind, &g.Method, &g.FirstSeen); err != nil {
			rows.Close()
			return nil, fmt.Errorf("groups: new: %w", err)
		}
		g.FirstSeen = g.FirstSeen.UTC()
		g.ID = g.Key.ID()
		cand = append(cand, g)
		agents[g.Agent] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("groups: new: %w", err)
	}
	if len(cand) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(agents))
	for a := range agents {
		names = append(names, a)
	}
	rows, err = conn.Query(ctx, fmt.Sprintf(`SELECT agent, minMerge(first_seen)
FROM %s.%s
WHERE has(?, agent)
GROUP BY agent`, db, Table), names)
	if err != nil {
		return nil, fmt.Errorf("groups: new: %w", err)
	}
	first := map[string]time.Time{}
	for rows.Next() {
		var a string
		var t time.Time
		if err := rows.Scan(&a, &t); err != nil {
			rows.Close()
			return nil, fmt.Errorf("groups: new: %w", err)
		}
		first[a] = t.UTC()
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("groups: new: %w", err)
	}
	var out []NewGroup
	for _, g := range cand {
		if af, ok := first[g.Agent]; ok && !af.After(g.FirstSeen.Add(-Window)) {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Agent != out[j].Agent {
			return out[i].Agent < out[j].Agent
		}
		return out[i].FirstSeen.Before(out[j].FirstSeen) || out[i].FirstSeen.Equal(out[j].FirstSeen) && out[i].ID < out[j].ID
	})
	return out, nil
}
