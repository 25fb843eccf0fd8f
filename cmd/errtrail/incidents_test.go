package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/schema"
)

// incidentsCmdDB is this process's own database (another suite may run this
// test on the same server at once).
var incidentsCmdDB = fmt.Sprintf("errtrail_incidents_cmd_test_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)

// TestIncidentsCommand: errtrail incidents on a migrated database with two
// recorded episodes prints both, the latest first, narrows by agent, kind
// and range, answers JSON in the API's shape, refuses bad flags with exit 2
// and a database without errtrail's tables with exit 6.
func TestIncidentsCommand(t *testing.T) {
	addr := testenv.ClickHouse(t)
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: strings.Split(addr, ","), Protocol: clickhouse.Native,
		Auth: clickhouse.Auth{Database: "default", Username: "default"}, DialTimeout: testenv.CHDialTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	if err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+incidentsCmdDB); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Migrate(ctx, conn, schema.Options{Database: incidentsCmdDB}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+incidentsCmdDB) }()
	start := time.Now().UTC().Truncate(time.Second).Add(-2 * time.Hour)
	rows := []incidents.Incident{
		{Kind: incidents.Overload, Agent: "billing", Start: start, Fired: start.Add(20 * time.Second),
			LastSeen: start.Add(4 * time.Minute), End: start.Add(5 * time.Minute), PeakRate: 2, PeakCallers: 4,
			Evaluations: 25, Version: 2},
		{Kind: incidents.Runaway, Agent: "search", Caller: "looper", Start: start.Add(time.Hour), Fired: start.Add(61 * time.Minute),
			LastSeen: start.Add(62 * time.Minute), Detail: "own_baseline", PeakRate: 5, PeakScore: 150, Evaluations: 9, Version: 3},
	}
	if err := incidents.Write(ctx, conn, incidentsCmdDB, rows); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		base := []string{"incidents", "--clickhouse.addr", addr, "--clickhouse.database", incidentsCmdDB}
		code := run(ctx, append(base, args...), &out, &errb)
		return code, out.String(), errb.String()
	}

	code, out, errs := cli()
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "runaway") || !strings.Contains(lines[1], "looper") ||
		!strings.Contains(lines[1], "open") || !strings.Contains(lines[2], "overload") || !strings.Contains(lines[2], "5m0s") ||
		!strings.Contains(lines[2], "from 4 callers") {
		t.Errorf("text: want a header, the open runaway, then the 5-minute overload of 4 callers:\n%s", out)
	}
	if code, out, _ := cli("--agent", "billing"); code != exitOK || strings.Contains(out, "looper") || !strings.Contains(out, "billing") {
		t.Errorf("--agent billing: exit %d:\n%s", code, out)
	}
	if code, out, _ := cli("--kind", "runaway", "--json"); code != exitOK {
		t.Errorf("--kind runaway --json: exit %d", code)
	} else {
		var got struct{ Incidents []incidents.Incident }
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Incidents) != 1 || got.Incidents[0].Caller != "looper" {
			t.Errorf("--json: %v %+v\n%s", err, got, out)
		}
	}
	from := start.Add(10 * time.Minute).Format(time.RFC3339)
	if code, out, _ := cli("--from", from); code != exitOK || strings.Contains(out, "billing") || !strings.Contains(out, "looper") {
		t.Errorf("--from after the overload ended: exit %d:\n%s", code, out)
	}
	if code, out, _ := cli("--to", start.Add(-time.Minute).Format(time.RFC3339)); code != exitOK || !strings.Contains(out, "no incidents") {
		t.Errorf("a range before both: exit %d:\n%s", code, out)
	}
	for _, bad := range [][]string{{"--kind", "quota"}, {"--from", "yesterday"}, {"--from", from, "--to", from}, {"billing"}, {"--limit", "0"}} {
		if code, _, errs := cli(bad...); code != exitUsage || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a reason", bad, code, errs)
		}
	}
	var errb bytes.Buffer
	if code := run(ctx, []string{"incidents", "--clickhouse.addr", addr, "--clickhouse.database", "errtrail_no_such_db_h26"}, &bytes.Buffer{}, &errb); code != exitConfig {
		t.Errorf("a database that does not exist: exit %d (%s), want %d", code, errb.String(), exitConfig)
	}
}
