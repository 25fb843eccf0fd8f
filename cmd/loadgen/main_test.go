package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/cmdkit"
	"github.com/errtrail/errtrail/loadgen"
)

// A scenario whose every call but each stream's first is rejected, so its
// baseline has error replies to count.
const tinyScenario = `
name: tiny
seed: 1
duration: 2s
agents: [{name: a, shape: a2a-http, limit: {rate_per_min: 0.001, burst: 1}}]
callers: [{name: c, count: 2, rate_per_min: 60, behaviour: no-retry}]
faults: [{kind: overload, agent: a}]
`

// TestRunHistoryFlagFakeProducer runs `loadgen run --history 10m` into a
// file (--out, no broker) and checks the manifest against the file: the
// history's messages are observed in the 10 minutes before the scenario,
// counted apart and in the totals, and hold no overload.
func TestRunHistoryFlagFakeProducer(t *testing.T) {
	dir := t.TempDir()
	scen, out, manifest := filepath.Join(dir, "tiny.yaml"), filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "m.json")
	if err := os.WriteFile(scen, []byte(tinyScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	err := run(context.Background(), "run", []string{"--history", "10m", "--speed", "4", "--progress", "0",
		"--out", out, "--manifest", manifest, scen}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var rep loadgen.Report
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	h := rep.History
	if h == nil {
		t.Fatalf("manifest has no history: %s", b)
	}
	if from := before.Add(-10 * time.Minute).UnixMilli(); h.FromMS < from || h.FromMS > from+1000 || h.ToMS <= h.FromMS {
		t.Errorf("history [%d, %d); want it to start 10 min before the run (%d)", h.FromMS, h.ToMS, from)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var lines, hist, overloadInHist int64
	for _, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var e struct {
			ObservedAt int64 `json:"observed_at"`
			Reply      struct {
				HTTPStatus int `json:"http_status"`
			} `json:"reply"`
		}
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("line %d: %v", lines+1, err)
		}
		lines++
		if e.ObservedAt < h.ToMS {
			hist++
			if e.Reply.HTTPStatus == 503 {
				overloadInHist++
			}
		}
	}
	// 2 callers × 60/min × speed 4 × 10 min ≈ 4800 rejections.
	if hist != h.Produced || lines != rep.Produced || hist < 4000 || hist > 5600 {
		t.Errorf("file: %d lines, %d before the scenario; manifest: produced %d, history %d (want ≈ 4800)",
			lines, hist, rep.Produced, h.Produced)
	}
	if overloadInHist != 0 || rep.Produced == h.Produced {
		t.Errorf("%d overload replies in the history, %d messages after it; want none, and the scenario's overload after it",
			overloadInHist, rep.Produced-h.Produced)
	}
}

// TestHistoryFlagRefusedUnpaced: a flood runs unpaced, so it has no
// --history: refused as a flag it does not have (exit 2), and its help
// does not list it.
func TestHistoryFlagRefusedUnpaced(t *testing.T) {
	var out, errb bytes.Buffer
	code := cli(context.Background(), []string{"flood", "--history", "1h", "--events", "10", "--progress", "0",
		"--out", filepath.Join(t.TempDir(), "out.jsonl")}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "flag provided but not defined: -history") {
		t.Fatalf("flood --history 1h: exit %d, want 2 naming the flag:\n%s", code, errb.String())
	}
}

// TestHelpListsCommandsAndOwnFlags: loadgen's help names every command,
// and each command's -h lists its own flags and not the others': run and
// demo are paced (--speed, --history, --max-events), flood is not
// (--events, --scenario); drop-topics has only its two; list has none.
// Help exits 0, and no flag help says "Usage of".
func TestHelpListsCommandsAndOwnFlags(t *testing.T) {
	line := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = "\n  -" + n + " "
		}
		return out
	}
	common := line("kafka.brokers", "kafka.topic", "out", "manifest", "body-form", "batch")
	paced := line("speed", "history", "max-events")
	flood := line("events", "scenario")
	commands := []string{"loadgen run SCENARIO", "loadgen demo", "loadgen flood", "loadgen list", "loadgen drop-topics"}
	for _, c := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"--help"}, commands, append(common, "Usage of")},
		{[]string{"help"}, commands, common},
		{[]string{"run", "-h"}, append(append([]string{"usage: loadgen run SCENARIO"}, common...), paced...), append(flood, "Usage of")},
		{[]string{"demo", "-h"}, append(append([]string{"usage: loadgen demo"}, common...), paced...), append(flood, "Usage of")},
		{[]string{"flood", "-h"}, append(append([]string{"usage: loadgen flood"}, common...), flood...), append(paced, "Usage of")},
		{[]string{"drop-topics", "-h"}, append([]string{"usage: loadgen drop-topics"}, line("kafka.brokers", "prefix")...),
			append(append(line("kafka.topic", "out"), paced...), "Usage of")},
		{[]string{"list", "-h"}, []string{"usage: loadgen list", "no flags"}, append(common, "INVALID", "steady")},
	} {
		var out, errb bytes.Buffer
		code := cli(context.Background(), c.args, &out, &errb)
		got := out.String() + errb.String()
		if code != 0 {
			t.Errorf("loadgen %v: exit %d, want 0", c.args, code)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("loadgen %v: lacks %q", c.args, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("loadgen %v: shows %q, which is not its own", c.args, n)
			}
		}
		if t.Failed() {
			t.Fatalf("loadgen %v printed:\n%s", c.args, got)
		}
	}
}

// TestKafkaDefaultIsTheKits: the load tool's default brokers (its
// library's loadgen.DefaultBrokers) are every command's default
// --kafka.brokers, so the demo's load reaches the broker ingest reads.
func TestKafkaDefaultIsTheKits(t *testing.T) {
	if loadgen.DefaultBrokers != cmdkit.DefaultKafkaBrokers {
		t.Errorf("loadgen.DefaultBrokers %q, cmdkit.DefaultKafkaBrokers %q", loadgen.DefaultBrokers, cmdkit.DefaultKafkaBrokers)
	}
}
