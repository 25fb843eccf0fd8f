package report

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/errtrail/errtrail/lookup"
)

func TestObserver(t *testing.T) {
	cases := []struct {
		in   map[string]uint64
		want string
	}{
		{map[string]uint64{"agent": 1, "gateway": 100, "client": 5}, "agent"},
		{map[string]uint64{"agent": 0, "gateway": 3, "client": 5}, "gateway"},
		{map[string]uint64{"client": 5, "": 50}, "client"},
		{map[string]uint64{"": 5, "probe": 7}, "probe"},
		{map[string]uint64{"": 7, "probe": 7}, ""},
		{map[string]uint64{}, ""},
	}
	for _, c := range cases {
		if got := Observer(c.in); got != c.want {
			t.Errorf("Observer(%v) = %q; want %q", c.in, got, c.want)
		}
	}
}

// A reply seen by the agent and by a gateway is counted from the agent's
// row; codes this build does not know are reported after known ones, with
// the code as title.
func TestBuildCountsOneObserver(t *testing.T) {
	from := time.Unix(1_700_000_000, 0).UTC()
	r := build("a", from, from.Add(time.Hour), merge([]partRow{
		{"a", "agent", "", 6, 2, "", "", 0, 0},
		{"a", "gateway", "", 10, 10, "", "", 0, 0},
		{"a", "agent", "from_the_future", 2, 2, "e1", "", 5, 0},
		{"a", "agent", "untyped_5xx", 1, 1, "e2", "x2", 1, 0},
		{"a", "agent", "retry_delay_missing", 2, 2, "e3", "", 5, 0},
		{"a", "gateway", "body_missing", 10, 10, "g1", "", 5, 0},
		// The second range: adds up, and its later example without an
		// error_id does not replace e2.
		{"a", "agent", "", 4, 2, "", "", 0, 0},
		{"a", "agent", "untyped_5xx", 1, 1, "e4", "", 9, 0},
	}))
	if r.Replies != 10 || r.OtherObservations != 10 || r.Source != "agent" {
		t.Fatalf("replies %d other %d source %q; want 10, 10, agent", r.Replies, r.OtherObservations, r.Source)
	}
	var codes []string
	for _, x := range r.Rules {
		codes = append(codes, x.Code)
		if x.Share != 0.2 {
			t.Errorf("%s share %v; want 0.2", x.Code, x.Share)
		}
	}
	if got := codes; len(got) != 3 || got[0] != "retry_delay_missing" || got[1] != "untyped_5xx" || got[2] != "from_the_future" {
		t.Errorf("rule order %v; want documentation order, unknown code last", got)
	}
	if r.Rules[2].Title != "from_the_future" || r.Rules[1].ExampleEventID != "e2" || r.Rules[1].ExampleErrorID != "x2" {
		t.Errorf("rules %+v", r.Rules)
	}
	for _, c := range r.Clean {
		if c == "retry_delay_missing" || c == "untyped_5xx" {
			t.Errorf("broken rule %s listed as clean", c)
		}
	}
	found := false
	for _, c := range r.Clean {
		found = found || c == "body_missing"
	}
	if !found {
		t.Error("body_missing, broken only in the gateway's copies, is not clean")
	}
}

func TestBadRanges(t *testing.T) {
	now := time.Now()
	// Nothing listens on port 1: a range check must answer before any query.
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{"127.0.0.1:1"}, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := &ClickHouse{Conn: conn}
	for _, rg := range []struct {
		name     string
		from, to time.Time
	}{
		{"zero", time.Time{}, now},
		{"unset to", now, time.Time{}},
		{"empty", now, now},
		{"reversed", now, now.Add(-time.Minute)},
		{"too long", now.Add(-MaxRange - time.Second), now},
		{"before 1970", time.Unix(-10, 0), now},
		{"after 2106", now, time.Unix(1<<33, 0)},
	} {
		_, err := c.Report(context.Background(), "a", rg.from, rg.to)
		var bad *BadRangeError
		if !errors.As(err, &bad) {
			t.Errorf("%s: %v; want a *BadRangeError", rg.name, err)
		}
	}
	if err := CheckRange(now.Add(-MaxRange), now); err != nil {
		t.Errorf("exactly MaxRange: %v", err)
	}
	// A good range against a server that is not there: unavailable, not bad input.
	_, err = c.Report(context.Background(), "a", now.Add(-time.Hour), now)
	var un *lookup.UnavailableError
	var bad *BadRangeError
	if !errors.As(err, &un) || errors.As(err, &bad) {
		t.Errorf("no server: %v; want a *lookup.UnavailableError", err)
	}
	// A database name that cannot be spliced into SQL is refused before any query.
	_, err = (&ClickHouse{Conn: conn, Database: "x; DROP"}).Report(context.Background(), "a", now.Add(-time.Hour), now)
	if err == nil || errors.As(err, &un) || errors.As(err, &bad) {
		t.Errorf("bad database: %v; want a configuration error", err)
	}
}

// TestBuildRuleLevel: each broken rule carries its level from parse.Rules,
// so the report tells a violation (MUST) from advice (SHOULD); a code this
// build does not know has none.
func TestBuildRuleLevel(t *testing.T) {
	from := time.Unix(1_700_000_000, 0).UTC()
	r := build("a", from, from.Add(time.Hour), merge([]partRow{
		{"a", "agent", "", 3, 3, "", "", 0, 0},
		{"a", "agent", "body_missing", 1, 0, "e1", "", 1, 0},
		{"a", "agent", "untyped_5xx", 1, 0, "e2", "", 1, 0},
		{"a", "agent", "a_newer_code", 1, 0, "e3", "", 1, 0},
	}))
	want := map[string]string{"body_missing": "MUST", "untyped_5xx": "SHOULD", "a_newer_code": ""}
	if len(r.Rules) != len(want) {
		t.Fatalf("rules %+v", r.Rules)
	}
	for _, rule := range r.Rules {
		if lv, ok := want[rule.Code]; !ok || rule.Level != lv {
			t.Errorf("rule %s: level %q; want %q", rule.Code, rule.Level, lv)
		}
	}
}

// TestBuildOver: the steps of a 7-hour range are its hours; each row counts
// in its own step, only the counted observer's rows count (the gateway's
// copies do not), each rule's steps add up to its Replies and the steps'
// replies to Report.Replies; a step with nothing is 0, not missing.
func TestBuildOver(t *testing.T) {
	from := time.Unix(1_700_000_000, 0).UTC().Truncate(time.Hour).Add(20 * time.Minute)
	to := from.Add(7 * time.Hour)
	parts := []partRow{
		{"a", "agent", "", 6, 2, "", "", 0, 0},
		{"a", "agent", "", 4, 1, "", "", 0, 3},
		{"a", "gateway", "", 10, 10, "", "", 0, 1},
		{"a", "agent", "untyped_5xx", 2, 2, "e1", "", 1, 0},
		{"a", "agent", "untyped_5xx", 1, 1, "e2", "", 9, 3},
		{"a", "gateway", "untyped_5xx", 10, 10, "g1", "", 5, 1},
		{"a", "agent", "body_missing", 1, 1, "e3", "", 5, 7}, // the last hour
	}
	r := build("a", from, to, merge(parts))
	o := buildOver(r, parts)
	if o.Step != "hour" || len(o.Starts) != 8 || !o.Starts[0].Equal(from.Truncate(time.Hour)) || !o.Starts[7].Equal(from.Truncate(time.Hour).Add(7*time.Hour)) {
		t.Fatalf("steps %s %v; want the 8 hours from %s", o.Step, o.Starts, from.Truncate(time.Hour))
	}
	if got := fmt.Sprint(o.Replies); got != "[6 0 0 4 0 0 0 0]" {
		t.Errorf("replies per hour %s; want [6 0 0 4 0 0 0 0] (the gateway's 10 copies left out)", got)
	}
	var sum int64
	for _, n := range o.Replies {
		sum += n
	}
	if sum != r.Replies {
		t.Errorf("the steps add up to %d replies; the report counts %d", sum, r.Replies)
	}
	if len(o.Rules) != len(r.Rules) {
		t.Fatalf("over has %d rules; the report %d", len(o.Rules), len(r.Rules))
	}
	for i, ro := range o.Rules {
		if ro.Code != r.Rules[i].Code {
			t.Errorf("rule %d: %s; the report's is %s", i, ro.Code, r.Rules[i].Code)
		}
	}
	if got := o.Rules[0].Code + fmt.Sprint(o.Rules[0].Replies); got != "untyped_5xx[2 0 0 1 0 0 0 0]" {
		t.Errorf("untyped_5xx per hour: %s", got)
	}
	if got := fmt.Sprint(o.Rules[1].Replies); o.Rules[1].Code != "body_missing" || got != "[0 0 0 0 0 0 0 1]" {
		t.Errorf("body_missing per hour: %s %s", o.Rules[1].Code, got)
	}

	// Over three days, days.
	if _, _, n := overSteps(from, from.Add(OverHourly)); n != 73 {
		t.Errorf("72 hours from :20 past: %d steps; want 73 hours", n)
	}
	step, origin, n := overSteps(from, from.Add(7*24*time.Hour))
	if step != 24*time.Hour || !origin.Equal(from.Truncate(24*time.Hour)) || n != 8 {
		t.Errorf("a week: step %v origin %s %d steps; want days from %s, 8", step, origin, n, from.Truncate(24*time.Hour))
	}
}
