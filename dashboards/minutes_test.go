package dashboards_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/errtrail/errtrail/dashboards"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/schema"
)

// TestMinutePanelsCountBothTablesAndCallers runs the panels that count
// errors per minute on the real server with known rows: replies stored
// before migration 010 (rows of errors_1m, written here as the old view
// wrote them) and after it (landing rows, counted by errors_1m_v2 and
// callers_1m). The panels without a caller count both, each reply once;
// with $caller the agent's kinds panel shows that caller's quota,
// overload and other from callers_1m, and nothing of the other callers.
func TestMinutePanelsCountBothTablesAndCallers(t *testing.T) {
	addr := testenv.ClickHouse(t)
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: strings.Split(addr, ","), DialTimeout: testenv.CHDialTimeout})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opts := schema.Options{Database: fmt.Sprintf("errtrail_dash_min_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)}
	t.Cleanup(func() {
		conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+opts.Database)
		conn.Close()
	})
	if _, err := schema.Migrate(ctx, conn, opts); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	// After the migration: testRows (agent-a: 1 overload, 2 quota of c2, 1
	// unknown; agent-b: 1 internal), 10 minutes ago.
	insertLanding(t, ctx, conn, opts, now.Add(-5*time.Minute), testRows(now))
	// Before it: 3 quota replies of c2 and 4 invalid of c9 on agent-a, an
	// hour ago, in the old table (callers_1m has them too, as the view
	// wrote both).
	hourAgo := now.Add(-time.Hour).Truncate(time.Minute).Unix()
	for _, st := range []string{
		fmt.Sprintf("INSERT INTO %s.errors_1m (agent, minute, kind, caller, typed, n) SELECT 'agent-a', toDateTime(%d), 'quota', 'c2', toUInt8(1), toUInt64(3)", opts.Database, hourAgo),
		fmt.Sprintf("INSERT INTO %s.errors_1m (agent, minute, kind, caller, typed, n) SELECT 'agent-a', toDateTime(%d), 'invalid', 'c9', toUInt8(1), toUInt64(4)", opts.Database, hourAgo),
		fmt.Sprintf("INSERT INTO %s.callers_1m (minute, agent, caller, source_kind, n, quota) SELECT toDateTime(%d), 'agent-a', 'c2', 'agent', toUInt64(3), toUInt64(3)", opts.Database, hourAgo),
		fmt.Sprintf("INSERT INTO %s.callers_1m (minute, agent, caller, source_kind, n) SELECT toDateTime(%d), 'agent-a', 'c9', 'agent', toUInt64(4)", opts.Database, hourAgo),
	} {
		if err := conn.Exec(ctx, st); err != nil {
			t.Fatalf("%v\n%s", err, st)
		}
	}
	plain := dashboards.TestValues(opts.Database)[0]
	oneCaller := plain
	oneCaller.Name, oneCaller.Vars = "caller c2", map[string]string{}
	for k, v := range plain.Vars {
		oneCaller.Vars[k] = v
	}
	oneCaller.Vars["caller"] = "c2"
	qs, err := dashboards.ExpandedQueries([]dashboards.Values{plain, oneCaller})
	if err != nil {
		t.Fatal(err)
	}
	// sums runs one panel's query and sums its last column per the
	// text columns' values (a time series' rate times the interval).
	sums := func(uid, title, values string) map[string]float64 {
		t.Helper()
		i := slices.IndexFunc(qs, func(q dashboards.Query) bool {
			return q.Dashboard == uid && q.Where == title && q.Values == values
		})
		if i < 0 {
			t.Fatalf("no query %s / %s / %s", uid, title, values)
		}
		cols, rows, err := run(ctx, conn, qs[i].SQL)
		if err != nil {
			t.Fatalf("%s / %s: %v\n%s", uid, title, err, qs[i].SQL)
		}
		out := map[string]float64{}
		for _, r := range rows {
			var key []string
			for _, v := range r[:len(r)-1] {
				if s, ok := v.(string); ok {
					key = append(key, s)
				}
			}
			var x float64
			switch v := r[len(r)-1].(type) {
			case float64:
				x = v * float64(plain.IntervalS)
			case uint64:
				x = float64(v)
			default:
				t.Fatalf("%s / %s: last column %s is %T", uid, title, cols[len(cols)-1], v)
			}
			out[strings.Join(key, " ")] += x
		}
		return out
	}
	check := func(what string, got map[string]float64, want string) {
		t.Helper()
		if fmt.Sprint(got) != want {
			t.Errorf("%s: %v; want %s", what, got, want)
		}
	}
	check("overview, errors by kind", sums(dashboards.UIDOverview, "Errors/s by kind", "plain"),
		"map[internal:1 invalid:4 overload:1 quota:5 unknown:1]")
	check("agent-a, errors by kind", sums(dashboards.UIDAgent, "Errors/s by kind", "plain"),
		"map[invalid:4 overload:1 quota:5 unknown:1]")
	check("agent-a, caller c2, errors by class", sums(dashboards.UIDAgent, "Errors/s by kind", "caller c2"),
		"map[quota:5]")
	check("agent-a, quota by limit", sums(dashboards.UIDAgent, "Quota rejections by limit", "plain"),
		"map[(none):4 rpm:1]")
	check("agent-a, caller c2, quota by limit (from errors: the replies after the migration)",
		sums(dashboards.UIDAgent, "Quota rejections by limit", "caller c2"), "map[(none):1 rpm:1]")
	check("agent-a, top 10 callers", sums(dashboards.UIDAgent, "Errors/s of the top 10 callers", "plain"),
		"map[c1:1 c2:5 c9:4 o'brien:1]")
}
