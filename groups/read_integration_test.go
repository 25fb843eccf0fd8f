package groups_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/internal/grouptest"
)

type reply = grouptest.Reply

// scenario: billing-agent ran 1.9 for three hours with a steady internal
// error, a caller over its quota and a rare error quiet for 30 hours;
// then 1.10 from 25 minutes before now, with which a new error class
// (TOOL_TIMEOUT) starts and the rare one comes back. search-agent has
// only 40 minutes of history, all of it "new" to a naive reader.
func scenario(now time.Time) []reply {
	var rs []reply
	add := func(r reply, start time.Time, step time.Duration, n int) {
		rs = append(rs, grouptest.Every(r, start, step, n)...)
	}
	steady := reply{Agent: "billing-agent", Caller: "c1", Code: "INTERNAL_ERROR", Kind: "internal", Version: "1.9"}
	add(steady, now.Add(-3*time.Hour), 5*time.Minute, 31)
	steady.Version, steady.Caller = "1.10", "c2"
	add(steady, now.Add(-24*time.Minute), 4*time.Minute, 6)
	quota := reply{Agent: "billing-agent", Caller: "greedy", Code: "RATE_LIMIT_EXCEEDED", Kind: "quota", Version: "1.9"}
	add(quota, now.Add(-3*time.Hour), time.Minute, 120)
	add(reply{Agent: "billing-agent", Caller: "c3", Code: "RATE_LIMIT_EXCEEDED", Kind: "quota", Version: "1.10", Method: "tasks/get"},
		now.Add(-20*time.Minute), time.Minute, 10) // a new quota group: never new
	rare := reply{Agent: "billing-agent", Caller: "c4", Code: "DB_DEADLOCK", Kind: "internal", Version: "1.9"}
	add(rare, now.Add(-40*time.Hour), time.Minute, 3)
	rare.Version = "1.10"
	add(rare, now.Add(-10*time.Minute), time.Minute, 2)
	add(reply{Agent: "billing-agent", Caller: "c5", Code: "TOOL_TIMEOUT", Kind: "unavailable", Version: "1.10", ErrorID: "err_tool_1"},
		now.Add(-15*time.Minute), 30*time.Second, 8)
	// Gone in 1.9 and back in 1.10 (a regression by version); and a group
	// of 1.9 that an old 1.8 replica raises again (no regression).
	add(reply{Agent: "billing-agent", Caller: "c7", Code: "CACHE_MISS", Kind: "internal", Version: "1.8"}, now.Add(-5*time.Hour), time.Minute, 5)
	add(reply{Agent: "billing-agent", Caller: "c7", Code: "CACHE_MISS", Kind: "internal", Version: "1.10"}, now.Add(-10*time.Minute), time.Minute, 3)
	add(reply{Agent: "billing-agent", Caller: "c8", Code: "OLD_BUG", Kind: "internal", Version: "1.9"}, now.Add(-3*time.Hour), time.Minute, 5)
	add(reply{Agent: "billing-agent", Caller: "c8", Code: "OLD_BUG", Kind: "internal", Version: "1.8"}, now.Add(-10*time.Minute), time.Minute, 3)
	add(reply{Agent: "search-agent", Caller: "c6", Code: "BAD_QUERY", Kind: "invalid_argument", Version: "0.3.0"},
		now.Add(-40*time.Minute), time.Minute, 20)
	add(reply{Agent: "search-agent", Caller: "c6", Code: "INDEX_DOWN", Kind: "unavailable", Version: "0.3.0"},
		now.Add(-10*time.Minute), time.Minute, 5)
	return rs
}

// TestReadGroupsOfAnAgent: Read answers an agent's groups from the
// rollups with their counts, callers, versions, example and hours, agrees
// with a count over errors, and tells new (TOOL_TIMEOUT) and regression
// (DB_DEADLOCK after 40 h; CACHE_MISS, gone in 1.9 and back in 1.10) from
// the steady group, the quota groups and OLD_BUG (raised again by an old
// 1.8 replica), which are neither.
func TestReadGroupsOfAnAgent(t *testing.T) {
	conn, db := grouptest.OpenDB(t, "errtrail_groups_read")
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	grouptest.Write(t, conn, db, scenario(now)...)

	got, err := groups.Read(ctx, conn, db, groups.Filter{Agent: "billing-agent", From: now.Add(-7 * 24 * time.Hour), To: now.Add(time.Second), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	byCode := map[string]groups.Group{}
	for _, g := range got {
		if g.Agent != "billing-agent" {
			t.Errorf("group of %s in billing-agent's answer", g.Agent)
		}
		byCode[g.Code+"/"+g.Method] = g
	}
	if len(got) != 7 {
		t.Fatalf("%d groups; want 7 (steady, quota x2, rare, new, cache miss, old bug): %+v", len(got), got)
	}
	// The rollup agrees with a count over errors, group by group.
	rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT if(reason != '', reason, code) AS c, method, count(), uniqExact(caller)
FROM %s.errors WHERE agent = 'billing-agent' GROUP BY c, method`, db))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var code, method string
		var cnt, callers uint64
		if err := rows.Scan(&code, &method, &cnt, &callers); err != nil {
			t.Fatal(err)
		}
		n++
		g, ok := byCode[code+"/"+method]
		if !ok {
			t.Errorf("errors has group %s/%s; Read has not", code, method)
			continue
		}
		var hours uint64
		for _, h := range g.Hours {
			hours += h.Count
		}
		if g.Count != cnt || hours != cnt || g.Callers != callers {
			t.Errorf("%s/%s: count %d, hours sum %d, callers %d; errors says %d and %d callers", code, method, g.Count, hours, g.Callers, cnt, callers)
		}
	}
	rows.Close()
	if n != len(got) {
		t.Errorf("errors has %d groups; Read %d", n, len(got))
	}
	want := map[string]groups.State{
		"INTERNAL_ERROR/SendMessage": groups.Seen, "RATE_LIMIT_EXCEEDED/SendMessage": groups.Seen,
		"RATE_LIMIT_EXCEEDED/tasks/get": groups.Seen, "DB_DEADLOCK/SendMessage": groups.Regression,
		"TOOL_TIMEOUT/SendMessage": groups.New, "CACHE_MISS/SendMessage": groups.Regression,
		"OLD_BUG/SendMessage": groups.Seen,
	}
	for k, s := range want {
		if byCode[k].State != s {
			t.Errorf("%s: state %q (%s); want %q", k, byCode[k].State, byCode[k].Why, s)
		}
	}
	tool := byCode["TOOL_TIMEOUT/SendMessage"]
	if tool.Example != "err_tool_1" || len(tool.Versions) != 1 || tool.Versions[0].Version != "1.10" || tool.ID != tool.Key.ID() {
		t.Errorf("TOOL_TIMEOUT: example %q, versions %+v, id %s", tool.Example, tool.Versions, tool.ID)
	}
	steady := byCode["INTERNAL_ERROR/SendMessage"]
	if len(steady.Versions) != 2 || steady.Versions[0].Version != "1.10" || steady.Versions[1].Version != "1.9" {
		t.Errorf("steady group's versions %+v; want 1.10 then 1.9 (newest first, as versions)", steady.Versions)
	}
	if steady.Example == "" || steady.Example[:10] != "grouptest-" {
		t.Errorf("steady group's example %q; want its event id (no error_id)", steady.Example)
	}

	// Filters: new only, a version, one id, and a range that holds nothing.
	for _, c := range []struct {
		f    groups.Filter
		want []string
	}{
		{groups.Filter{NewOnly: true}, []string{"TOOL_TIMEOUT/SendMessage"}},
		{groups.Filter{Version: "1.9"}, []string{"DB_DEADLOCK/SendMessage", "INTERNAL_ERROR/SendMessage", "OLD_BUG/SendMessage", "RATE_LIMIT_EXCEEDED/SendMessage"}},
		{groups.Filter{ID: tool.ID}, []string{"TOOL_TIMEOUT/SendMessage"}},
		{groups.Filter{From: now.Add(30 * time.Minute), To: now.Add(time.Hour)}, nil},
	} {
		f := c.f
		f.Agent, f.Now = "billing-agent", now
		if f.From.IsZero() {
			f.From, f.To = now.Add(-7*24*time.Hour), now.Add(time.Second)
		}
		gs, err := groups.Read(ctx, conn, db, f)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, g := range gs {
			names = append(names, g.Code+"/"+g.Method)
		}
		if fmt.Sprint(sortStrings(names)) != fmt.Sprint(sortStrings(c.want)) {
			t.Errorf("filter %+v: %v; want %v", c.f, names, c.want)
		}
	}
	if _, err := groups.Read(ctx, conn, db, groups.Filter{Agent: "", From: now.Add(-time.Hour), To: now}); err == nil {
		t.Error("Read without an agent: no error")
	}
}

// TestNewAtEveryAgent: NewAt names billing-agent's new class and nothing
// else: not the steady group, not the quota groups (even the one first
// seen 20 minutes ago), not the regression, and none of search-agent's,
// whose history is younger than an hour (a fresh database's first hour).
func TestNewAtEveryAgent(t *testing.T) {
	conn, db := grouptest.OpenDB(t, "errtrail_groups_new")
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	grouptest.Write(t, conn, db, scenario(now)...)
	got, err := groups.NewAt(ctx, conn, db, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Agent != "billing-agent" || got[0].Code != "TOOL_TIMEOUT" {
		t.Fatalf("NewAt = %+v; want billing-agent's TOOL_TIMEOUT only", got)
	}
	// An hour later it is no longer new, and nothing else became new.
	later, err := groups.NewAt(ctx, conn, db, now.Add(61*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(later) != 0 {
		t.Errorf("NewAt an hour later = %+v; want none", later)
	}
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
