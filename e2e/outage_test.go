package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/loadgen"
)

// TestClickHouseOutage: ClickHouse stops answering (SIGSTOP) for four
// minutes while an overload page fires and messages keep arriving, and the
// overload ends during the outage. Two identical alerters run, as for
// availability. The ClickHouse is one of the test's own (testenv.Own), so
// the tests running meanwhile keep theirs. What on-call receives
// (Alertmanager's webhook deliveries, routed by alerts/alertmanager.yml):
//   - one overload alert, not one per alerter;
//   - the ingest stall pages within its rule's for (lag is measured from
//     Kafka, not from inserts), and errtrail's blindness pages, naming the
//     alert it holds;
//   - no "resolved" for the overload while errtrail cannot see;
//   - once ClickHouse answers: the stall resolves after the backlog drains,
//     the overload resolves (it really ended), and every message is stored.
func TestClickHouseOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: takes about 7 minutes")
	}
	t.Parallel()
	own := testenv.Own(t, "clickhouse")
	r := newRigOn(t, 2, own)
	ps := startPromStack(t, r)
	ing := r.startIngest()
	al := r.startAlerter(0, "--evaluation.interval=5s")
	al2 := r.startAlerter(1, "--evaluation.interval=5s")
	m := r.watch(2 * time.Second)

	sc, err := loadgen.LoadScenario(filepath.Join(r.root, "e2e", "testdata", "outage.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	agents := renameAgents(sc, func(a string) string { return "e2e-" + r.id + "-" + a })
	agent := agents["research-agent"]
	overload := lbl("alertname", "ErrtrailAgentOverloaded", "agent", agent)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		rep *loadgen.Report
		err error
	}
	done := make(chan result, 1)
	started := time.Now()
	go func() {
		rep, err := loadgen.Run(ctx, loadgen.Config{Brokers: r.brokers, Topic: r.topic, Scenario: sc,
			Speed: 1, Clock: "real", Compression: true, KeepIDs: -1})
		done <- result{rep, err}
	}()

	waitFor := func(what string, within time.Duration, ok func() bool) time.Time {
		t.Helper()
		deadline := time.Now().Add(within)
		for !ok() {
			for _, p := range []*proc{ing, al, al2} {
				if exited, err := p.exited(); exited {
					t.Fatalf("%s exited (%v):\n%s", p.name, err, tail(p.log, 30))
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s (notifications: %s)", what, within, joinNotes(ps.hook.find(nil, "")))
			}
			time.Sleep(time.Second)
		}
		t.Logf("%5.0fs: %s", time.Since(started).Seconds(), what)
		return time.Now()
	}

	waitFor("overload page delivered", 3*time.Minute, func() bool { return len(ps.hook.find(overload, "firing")) > 0 })
	// Two alerters, one alert: the rules aggregate away the instance.
	for _, n := range ps.hook.find(overload, "") {
		if _, ok := n.Labels["instance"]; ok {
			t.Errorf("overload alert carries an instance label (one alert per alerter): %s", n)
		}
	}
	own.Stack(t, "pause-clickhouse")
	paused := time.Now()
	resumed := false
	defer func() {
		if !resumed {
			own.Stack(t, "resume-clickhouse")
		}
	}()
	t.Logf("%5.0fs: ClickHouse paused", time.Since(started).Seconds())

	stalled := lbl("alertname", "ErrtrailIngestStalled")
	blind := lbl("alertname", "ErrtrailAlerterStale")
	waitFor("ingest stall paged", 4*time.Minute, func() bool { return len(ps.hook.find(stalled, "firing")) > 0 })
	waitFor("blindness paged", 4*time.Minute, func() bool { return len(ps.hook.find(blind, "firing")) > 0 })
	if d := time.Since(paused); d < 4*time.Minute {
		time.Sleep(4*time.Minute - d)
	}
	if res := ps.hook.find(overload, "resolved"); len(res) > 0 {
		t.Errorf("on-call was told the overload resolved while errtrail was blind: %s", joinNotes(res))
	}
	for _, n := range ps.hook.find(blind, "firing") {
		if !strings.Contains(n.Annotations["description"], "ErrtrailAgentOverloaded") {
			t.Errorf("the blindness page does not name the overload it holds: %q", n.Annotations["description"])
		}
	}
	own.Stack(t, "resume-clickhouse")
	resumed = true
	back := time.Now()
	t.Logf("%5.0fs: ClickHouse resumed", time.Since(started).Seconds())

	waitFor("stall resolved", 4*time.Minute, func() bool { return len(ps.hook.find(stalled, "resolved")) > 0 })
	waitFor("overload resolved", 4*time.Minute, func() bool { return len(ps.hook.find(overload, "resolved")) > 0 })
	for _, n := range ps.hook.find(overload, "resolved") {
		if n.At.Before(back) {
			t.Errorf("overload resolved at %s, before ClickHouse was back at %s", n.At.Format("15:04:05"), back.Format("15:04:05"))
		}
	}
	for _, n := range ps.hook.find(stalled, "resolved") {
		if n.At.Before(back) {
			t.Errorf("stall resolved at %s, before ClickHouse was back at %s", n.At.Format("15:04:05"), back.Format("15:04:05"))
		}
	}
	// Nothing else paged: the outage is these three pages, not more.
	for _, n := range ps.hook.find(lbl("severity", "page"), "firing") {
		switch n.Labels["alertname"] {
		case "ErrtrailAgentOverloaded", "ErrtrailIngestStalled", "ErrtrailAlerterStale":
		default:
			t.Errorf("unexpected page: %s", n)
		}
	}
	if bad := ps.hook.malformed(); len(bad) > 0 {
		t.Errorf("malformed webhook deliveries: %v", bad)
	}

	cancel()
	res := <-done
	if res.rep == nil {
		t.Fatalf("no load report (%v)", res.err)
	}
	m.close()
	var errs, dead uint64
	deadline := time.Now().Add(3 * time.Minute)
	for {
		errs, dead, err = r.stored()
		if err == nil && int64(errs+dead) >= res.rep.Produced || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if int64(errs+dead) != res.rep.Produced {
		t.Errorf("rows in errors + dead_letter = %d; want %d (messages produced)", errs+dead, res.rep.Produced)
	}
	t.Logf("produced %d, stored %d errors + %d dead letters; notifications: %s", res.rep.Produced, errs, dead,
		joinNotes(ps.hook.find(nil, "")))
}
