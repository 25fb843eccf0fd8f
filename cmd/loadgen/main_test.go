package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		"--out", out, "--manifest", manifest, scen})
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

// TestHistoryFlagRefusedUnpaced: a flood runs unpaced, so --history is
// refused with the reason.
func TestHistoryFlagRefusedUnpaced(t *testing.T) {
	err := run(context.Background(), "flood", []string{"--history", "1h", "--events", "10", "--progress", "0",
		"--out", filepath.Join(t.TempDir(), "out.jsonl")})
	if err == nil || !strings.Contains(err.Error(), "paced run") {
		t.Fatalf("flood --history 1h: error %v; want one saying a history needs a paced run", err)
	}
}
