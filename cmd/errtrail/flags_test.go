package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/errtrail/errtrail/internal/stackload"
)

// TestUnitFlagsAfterArgs: flags may follow the positional arguments, as a
// newcomer types them (`lookup ID --clickhouse.addr …`); "--" ends the
// flags unless it is a flag's value. No server: the parse alone.
func TestUnitFlagsAfterArgs(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		pos   []string
		addr  string
		agent string
		json  bool
	}{
		{args: []string{"err_1", "--clickhouse.addr", "ch:9000"}, pos: []string{"err_1"}, addr: "ch:9000"},
		{args: []string{"--clickhouse.addr", "ch:9000", "err_1"}, pos: []string{"err_1"}, addr: "ch:9000"},
		{args: []string{"--json", "err_1", "--agent=a1", "--clickhouse.addr=ch:9"}, pos: []string{"err_1"}, addr: "ch:9", agent: "a1", json: true},
		{args: []string{"a", "--json", "b"}, pos: []string{"a", "b"}, json: true},
		{args: []string{"--json", "--", "-dash-id", "--agent"}, pos: []string{"-dash-id", "--agent"}, json: true},
		{args: []string{"--agent", "--", "err_1"}, pos: []string{"err_1"}, agent: "--"},
		{args: []string{"err_1", "--json", "--", "--clickhouse.addr"}, pos: []string{"err_1", "--clickhouse.addr"}, json: true},
	} {
		var errb bytes.Buffer
		c := newCommon("lookup", &errb)
		out := addOutput(c)
		agent := c.fs.String("agent", "", "")
		if err := c.parse(tc.args); err != nil {
			t.Errorf("%q: %v (%s)", tc.args, err, errb.String())
			continue
		}
		if got := c.fs.Args(); !slices.Equal(got, tc.pos) {
			t.Errorf("%q: positional %q, want %q", tc.args, got, tc.pos)
		}
		wantAddr := tc.addr
		if wantAddr == "" {
			wantAddr = "127.0.0.1:19000"
		}
		if *c.chAddr != wantAddr || *agent != tc.agent || *out.json != tc.json {
			t.Errorf("%q: addr %q agent %q json %v; want %q %q %v", tc.args, *c.chAddr, *agent, *out.json, wantAddr, tc.agent, tc.json)
		}
	}
	// An unknown flag after the id is still an error, not an id.
	c := newCommon("lookup", &bytes.Buffer{})
	if err := c.parse([]string{"err_1", "--no-such-flag"}); err == nil {
		t.Error("an unknown flag after the id was accepted")
	}
}

// TestUnitLookupFlagsAfterID: `errtrail lookup ID --clickhouse.addr …` asks
// the store named by the flag (here a closed port: exit 4, unavailable), and
// does not fail with "want exactly one ID"; report takes flags after AGENT
// the same way.
func TestUnitLookupFlagsAfterID(t *testing.T) {
	closed := stackload.ClosedPort(t)
	for _, args := range [][]string{
		{"lookup", "err_01HZ9RATE01", "--clickhouse.addr", closed, "--query.timeout", "5s"},
		{"report", "research-agent", "--clickhouse.addr", closed, "--query.timeout", "5s"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		if code != exitUnavailable || strings.Contains(errb.String(), "exactly one") || strings.Contains(errb.String(), "at most one") {
			t.Errorf("%q: exit %d (want %d), stderr %q", args, code, exitUnavailable, errb.String())
		}
	}
	var errb bytes.Buffer
	if code := run(context.Background(), []string{"lookup", "a1b2", "c3d4", "--json"}, &bytes.Buffer{}, &errb); code != exitUsage || !strings.Contains(errb.String(), "exactly one ID") {
		t.Errorf("two ids: exit %d, %q", code, errb.String())
	}
}
