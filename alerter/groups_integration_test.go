package alerter_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/internal/grouptest"
)

// newGroupSeries runs one evaluation at now through a Runner (the one
// call the alerter makes) and returns the exported
// errtrail_alerter_error_group_new series, as label sets.
func newGroupSeries(t *testing.T, db string, r *alerter.Runner, reg *prometheus.Registry, now time.Time) []map[string]string {
	t.Helper()
	r.Clock = func() time.Time { return now }
	if _, err := r.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, mf := range mfs {
		if mf.GetName() != "errtrail_alerter_error_group_new" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetGauge().GetValue() != 1 {
				t.Errorf("a series of value %v", m.GetGauge().GetValue())
			}
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out = append(out, l)
		}
	}
	return out
}

func groupsRunner(t *testing.T, db string) (*alerter.Runner, *prometheus.Registry) {
	t.Helper()
	conn, _ := grouptest.OpenDB(t, "errtrail_alerter_groups_conn") // a connection (its own database unused)
	cfg := alerter.DefaultConfig()
	reg := prometheus.NewRegistry()
	ng := &alerter.NewGroups{Conn: conn, Database: db, Every: time.Nanosecond}
	reg.MustRegister(ng)
	return &alerter.Runner{Config: &cfg, Metrics: alerter.NewMetrics(prometheus.NewRegistry(), time.Minute, nil),
		Interval: 10 * time.Second, Timeout: 30 * time.Second,
		Reader: &alerter.Reader{Conn: conn, Database: db}, NewGroups: ng}, reg
}

type greply = grouptest.Reply

// TestNewErrorGroupAfterAVersionChange: billing-agent ran 1.4.9 for three
// hours with a steady internal error and a caller steadily over quota,
// then 1.5.0 from 20 minutes ago: the steady error goes on, a quota group
// of a new method starts, and a new error class (TOOL_TIMEOUT) starts.
// Exactly one series names the new class, with its group id; none names
// the steady class or either quota group. An hour after its first error
// it is gone.
func TestNewErrorGroupAfterAVersionChange(t *testing.T) {
	conn, db := grouptest.OpenDB(t, "errtrail_alerter_groups")
	now := time.Now().UTC().Truncate(time.Second)
	var rs []greply
	add := func(r greply, start time.Time, step time.Duration, n int) {
		rs = append(rs, grouptest.Every(r, start, step, n)...)
	}
	steady := greply{Agent: "billing-agent", Caller: "c1", Code: "INTERNAL_ERROR", Kind: "internal", Version: "1.4.9"}
	add(steady, now.Add(-3*time.Hour), 2*time.Minute, 80)
	steady.Version = "1.5.0"
	add(steady, now.Add(-20*time.Minute), 2*time.Minute, 10)
	add(greply{Agent: "billing-agent", Caller: "greedy", Code: "RATE_LIMIT_EXCEEDED", Kind: "quota", Version: "1.4.9"},
		now.Add(-3*time.Hour), time.Minute, 160)
	add(greply{Agent: "billing-agent", Caller: "greedy", Code: "RATE_LIMIT_EXCEEDED", Kind: "quota", Version: "1.5.0", Method: "tasks/get"},
		now.Add(-20*time.Minute), time.Minute, 20)
	add(greply{Agent: "billing-agent", Caller: "c2", Code: "TOOL_TIMEOUT", Kind: "unavailable", Version: "1.5.0"},
		now.Add(-15*time.Minute), time.Minute, 12)
	grouptest.Write(t, conn, db, rs...)

	r, reg := groupsRunner(t, db)
	got := newGroupSeries(t, db, r, reg, now)
	if len(got) != 1 {
		t.Fatalf("%d new-group series: %v; want exactly one (TOOL_TIMEOUT)", len(got), got)
	}
	g := got[0]
	if g["agent"] != "billing-agent" || g["code"] != "TOOL_TIMEOUT" || g["kind"] != "unavailable" || g["method"] != "SendMessage" || len(g["group"]) != 16 {
		t.Errorf("series %v; want billing-agent's TOOL_TIMEOUT with its group id", g)
	}
	if later := newGroupSeries(t, db, r, reg, now.Add(-15*time.Minute).Add(time.Hour+time.Second)); len(later) != 0 {
		t.Errorf("an hour after its first error: %v; want none", later)
	}
}

// TestNoNewErrorGroupInAFreshDatabasesFirstHour: a database whose errors
// all fall in its first 50 minutes (a fresh install, or the hour after
// migration 008 on an old one) exports no new group, although every group
// in it was first seen within the hour; a quota group never.
func TestNoNewErrorGroupInAFreshDatabasesFirstHour(t *testing.T) {
	conn, db := grouptest.OpenDB(t, "errtrail_alerter_groups_fresh")
	now := time.Now().UTC().Truncate(time.Second)
	var rs []greply
	rs = append(rs, grouptest.Every(greply{Agent: "a1", Caller: "c1", Code: "INTERNAL_ERROR", Version: "2.0.0"}, now.Add(-50*time.Minute), time.Minute, 50)...)
	rs = append(rs, grouptest.Every(greply{Agent: "a1", Caller: "c1", Code: "NEW_LATER", Version: "2.0.1"}, now.Add(-10*time.Minute), time.Minute, 10)...)
	rs = append(rs, grouptest.Every(greply{Agent: "a2", Caller: "g", Code: "RATE_LIMIT_EXCEEDED", Kind: "quota"}, now.Add(-30*time.Minute), time.Minute, 30)...)
	grouptest.Write(t, conn, db, rs...)
	r, reg := groupsRunner(t, db)
	if got := newGroupSeries(t, db, r, reg, now); len(got) != 0 {
		t.Errorf("fresh database: %v; want no new group", got)
	}
	// Past the first hour: a class first seen 65 minutes after a1's first
	// error is new; NEW_LATER, first seen 40 minutes after it, never was.
	grouptest.Write(t, conn, db, grouptest.Every(greply{Agent: "a1", Caller: "c1", Code: "LATE", Version: "2.0.1"}, now.Add(15*time.Minute), time.Minute, 3)...)
	got := newGroupSeries(t, db, r, reg, now.Add(20*time.Minute))
	if len(got) != 1 || got[0]["code"] != "LATE" {
		t.Errorf("after the first hour: %v; want LATE only", got)
	}
}
