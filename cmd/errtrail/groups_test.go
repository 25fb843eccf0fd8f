package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/internal/grouptest"
	"github.com/errtrail/errtrail/internal/testenv"
)

// TestGroupsCommand: errtrail groups AGENT lists the agent's groups with
// the new one marked and said why; --new keeps only it, --version keeps
// the groups of that version, --json answers the API's shape; another
// agent's groups never appear; bad usage exits 2.
func TestGroupsCommand(t *testing.T) {
	addr := testenv.ClickHouse(t)
	conn, db := grouptest.OpenDB(t, "errtrail_groups_cmd")
	now := time.Now().UTC().Truncate(time.Second)
	var rs []grouptest.Reply
	rs = append(rs, grouptest.Every(grouptest.Reply{Agent: "billing-agent", Caller: "c1", Code: "INTERNAL_ERROR", Version: "1.4.9"}, now.Add(-3*time.Hour), 5*time.Minute, 36)...)
	rs = append(rs, grouptest.Every(grouptest.Reply{Agent: "billing-agent", Caller: "c2", Code: "TOOL_TIMEOUT", Kind: "unavailable", Version: "1.5.0", ErrorID: "err_tool_7"}, now.Add(-6*time.Minute), time.Minute, 5)...)
	rs = append(rs, grouptest.Every(grouptest.Reply{Agent: "other-agent", Caller: "c3", Code: "OTHER_CODE", Version: "9.0"}, now.Add(-2*time.Hour), time.Minute, 5)...)
	grouptest.Write(t, conn, db, rs...)
	ctx := context.Background()
	cli := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		base := []string{"groups", "--clickhouse.addr", addr, "--clickhouse.database", db}
		code := run(ctx, append(base, args...), &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := cli("billing-agent")
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "new") || !strings.Contains(lines[1], "TOOL_TIMEOUT") || !strings.Contains(lines[1], "err_tool_7") ||
		!strings.Contains(lines[2], "INTERNAL_ERROR") || strings.HasPrefix(lines[2], "new") || !strings.Contains(lines[3], "new: first seen") {
		t.Errorf("text: want a header, the new TOOL_TIMEOUT, the old INTERNAL_ERROR and why the new one is new:\n%s", out)
	}
	if strings.Contains(out, "OTHER_CODE") {
		t.Errorf("another agent's group in billing-agent's answer:\n%s", out)
	}
	if code, out, _ := cli("billing-agent", "--new"); code != exitOK || !strings.Contains(out, "TOOL_TIMEOUT") || strings.Contains(out, "INTERNAL_ERROR") {
		t.Errorf("--new: exit %d:\n%s", code, out)
	}
	if code, out, _ := cli("--version", "1.4.9", "billing-agent"); code != exitOK || strings.Contains(out, "TOOL_TIMEOUT") || !strings.Contains(out, "INTERNAL_ERROR") {
		t.Errorf("--version 1.4.9: exit %d:\n%s", code, out)
	}
	code, out, _ = cli("billing-agent", "--json")
	var got struct {
		Agent  string
		Groups []groups.Group
	}
	if err := json.Unmarshal([]byte(out), &got); code != exitOK || err != nil || got.Agent != "billing-agent" || len(got.Groups) != 2 ||
		got.Groups[0].State != groups.New || len(got.Groups[0].Hours) == 0 {
		t.Errorf("--json: exit %d, %v, %+v\n%s", code, err, got, out)
	}
	for _, bad := range [][]string{{}, {"a", "b"}, {"a", "--to", "yesterday"}, {"a", "--since", "0s"}} {
		if code, _, _ := cli(bad...); code != exitUsage {
			t.Errorf("groups %q: exit %d; want %d", bad, code, exitUsage)
		}
	}
}
