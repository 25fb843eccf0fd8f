package incidents_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/schema"
)

// testDB is this process's own database (another suite may run these tests
// on the same server at once).
var testDB = fmt.Sprintf("errtrail_incidents_read_test_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)

func openFresh(t *testing.T) driver.Conn {
	t.Helper()
	addr := testenv.ClickHouse(t)
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: strings.Split(addr, ","), Protocol: clickhouse.Native,
		Auth: clickhouse.Auth{Database: "default", Username: "default"}, DialTimeout: testenv.CHDialTimeout, ReadTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx := context.Background()
	if err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+testDB); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Migrate(ctx, conn, schema.Options{Database: testDB}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+testDB) })
	return conn
}

var base = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func at(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }

// TestReadLatestWriteAndFilters: Read answers each episode's latest write
// (by version, not by insertion order) and selects by agent, kind, the
// range it overlaps and openness, and nothing else.
func TestReadLatestWriteAndFilters(t *testing.T) {
	conn := openFresh(t)
	ctx := context.Background()
	ov := incidents.Incident{Kind: incidents.Overload, Agent: "billing", Start: at(0), Fired: at(0).Add(20 * time.Second),
		PeakRate: 2, PeakCallers: 4, Writer: "a"}
	ended := ov
	ended.LastSeen, ended.End, ended.Evaluations, ended.Version = at(4), at(5), 25, uint64(at(5).UnixMilli())
	open := ov
	open.LastSeen, open.Evaluations, open.Version = at(1), 7, uint64(at(1).UnixMilli())
	run := incidents.Incident{Kind: incidents.Runaway, Agent: "search", Caller: "looper", Start: at(20), Fired: at(21),
		LastSeen: at(25), Detail: "own_baseline", PeakRate: 5, PeakScore: 150, Version: uint64(at(25).UnixMilli())}
	old := incidents.Incident{Kind: incidents.Overload, Agent: "other", Start: at(-60), Fired: at(-60), LastSeen: at(-51),
		End: at(-50), Version: uint64(at(-50).UnixMilli())}
	// The ended write first: the later insert of an older write must not
	// win.
	for _, rows := range [][]incidents.Incident{{ended, run, old}, {open}} {
		if err := incidents.Write(ctx, conn, testDB, rows); err != nil {
			t.Fatal(err)
		}
	}
	read := func(f incidents.Filter) []incidents.Incident {
		t.Helper()
		got, err := incidents.Read(ctx, conn, testDB, f)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	names := func(list []incidents.Incident) string {
		var s []string
		for _, i := range list {
			s = append(s, i.Agent)
		}
		return strings.Join(s, ",")
	}

	all := read(incidents.Filter{})
	if names(all) != "search,billing,other" {
		t.Fatalf("all episodes: %s, want search,billing,other (latest start first)", names(all))
	}
	if b := all[1]; b.Open() || !b.End.Equal(at(5)) || b.Evaluations != 25 || !b.LastSeen.Equal(at(4)) || !b.Fired.Equal(ov.Fired) {
		t.Errorf("billing's episode: end %v, evaluations %d, last seen %v, fired %v; want its latest write (ended at %v, 25, %v, %v)",
			b.End, b.Evaluations, b.LastSeen, b.Fired, at(5), at(4), ov.Fired)
	}
	if r := all[0]; !r.Open() || r.Caller != "looper" || r.Detail != "own_baseline" || r.PeakScore != 150 {
		t.Errorf("runaway episode read back as %+v", r)
	}
	for _, c := range []struct {
		name string
		f    incidents.Filter
		want string
	}{
		{"agent", incidents.Filter{Agent: "billing"}, "billing"},
		{"kind", incidents.Filter{Kind: incidents.Runaway}, "search"},
		{"open only", incidents.Filter{OpenOnly: true}, "search"},
		{"from after billing ended", incidents.Filter{From: at(6), To: at(60)}, "search"},
		{"from while billing was on", incidents.Filter{From: at(4), To: at(60)}, "search,billing"},
		{"to at billing's start", incidents.Filter{To: at(0)}, "other"},
		{"range with nothing", incidents.Filter{From: at(-40), To: at(-1)}, ""},
		{"limit", incidents.Filter{Limit: 1}, "search"},
	} {
		if got := names(read(c.f)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	for _, f := range []incidents.Filter{{From: at(5), To: at(5)}, {Kind: "quota"}} {
		if _, err := incidents.Read(ctx, conn, testDB, f); !errors.Is(err, incidents.ErrBadFilter) {
			t.Errorf("filter %+v: err %v, want ErrBadFilter", f, err)
		}
	}
	if _, err := incidents.Read(ctx, conn, "x; DROP", incidents.Filter{}); !errors.Is(err, incidents.ErrBadFilter) {
		t.Errorf("a database name that is no identifier: err %v, want ErrBadFilter", err)
	}
}

// TestAtMoment: At says whether an alerter was recording in the moment's
// minute, and lists the agent's episodes under way then: not one that
// started later or had ended, not another agent's.
func TestAtMoment(t *testing.T) {
	conn := openFresh(t)
	ctx := context.Background()
	rows := []incidents.Incident{
		{Kind: incidents.Overload, Agent: "billing", Start: at(0), LastSeen: at(4), End: at(5), Version: 1},
		{Kind: incidents.Runaway, Agent: "billing", Caller: "looper", Start: at(3), LastSeen: at(9), Version: 1},
		{Kind: incidents.Overload, Agent: "search", Start: at(0), LastSeen: at(9), Version: 1},
	}
	if err := incidents.Write(ctx, conn, testDB, rows); err != nil {
		t.Fatal(err)
	}
	for m := 0; m < 10; m++ {
		if err := incidents.MarkRecording(ctx, conn, testDB, "a", at(m).Add(7*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	kinds := func(m incidents.Moment) string {
		var s []string
		for _, i := range m.Incidents {
			s = append(s, string(i.Kind))
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		at        time.Time
		recording bool
		want      string
	}{
		{at(0).Add(-time.Second), false, ""}, // the minute before the first recorded one
		{at(0), true, "overload"},
		{at(3).Add(30 * time.Second), true, "runaway,overload"},
		{at(5), true, "runaway"},
		{at(12), false, "runaway"}, // still open: no alerter ended it
	} {
		got, err := incidents.At(ctx, conn, testDB, "billing", c.at)
		if err != nil {
			t.Fatal(err)
		}
		if got.Recording != c.recording || kinds(got) != c.want {
			t.Errorf("at %v: recording %v, episodes %q; want %v, %q", c.at, got.Recording, kinds(got), c.recording, c.want)
		}
	}
}
