package main

import (
	"bytes"
	"strings"
	"testing"
)

// helpOf runs ingest with args and returns its exit status and what it
// printed (stdout and stderr together).
func helpOf(args ...string) (int, string) {
	var out, errb bytes.Buffer
	code := run(args, nil, &out, &errb)
	return code, out.String() + errb.String()
}

// TestHelpListsCommandsAndOwnFlags: ingest's help names every subcommand
// (and says run migrates first), and each subcommand's --help lists its
// own flags and none of the other's: migrate has no Kafka, batch, server
// or pipeline flag, run has no --print. --help exits 0.
func TestHelpListsCommandsAndOwnFlags(t *testing.T) {
	commands := []string{"usage: ingest [COMMAND]", "\n  run ", "\n  migrate ", "\n  decode FILE", "\n  hash VALUE", "\n  help ", "migrations first"}
	// Flag lines of PrintDefaults: "\n  -name".
	runFlags := flagLines("kafka.brokers", "kafka.topic", "kafka.sasl.mechanism", "batch.rows", "insert.block-rows",
		"decode.workers", "http.listen-address", "shutdown.timeout", "gc.percent", "redact.key-file", "retention.interval",
		"clickhouse.shard-writes")
	shared := flagLines("clickhouse.addr", "clickhouse.database", "clickhouse.cluster", "clickhouse.tls.ca-file",
		"retention.days", "insert.timeout", "log.level")
	printFlag := flagLines("print")
	for _, c := range []struct {
		name      string
		args      []string
		want, not []string
	}{
		{"ingest --help", []string{"--help"}, concat(commands, runFlags, shared), concat(printFlag, []string{"Usage of"})},
		{"ingest run --help", []string{"run", "--help"}, concat(commands, runFlags, shared), concat(printFlag, []string{"Usage of"})},
		{"ingest migrate -h", []string{"migrate", "-h"}, concat([]string{"usage: ingest migrate", "needed only where"}, printFlag, shared),
			concat(runFlags, []string{"Usage of", "\n  decode FILE"})},
		{"ingest help", []string{"help"}, commands, concat(runFlags, shared)},
	} {
		code, out := helpOf(c.args...)
		if code != 0 {
			t.Errorf("%s: exit %d, want 0", c.name, code)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: lacks %q", c.name, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(out, n) {
				t.Errorf("%s: lists %q, which is not its own", c.name, n)
			}
		}
		if t.Failed() {
			t.Fatalf("%s printed:\n%s", c.name, out)
		}
	}
	// A flag of run is refused by migrate, not silently ignored.
	if code, out := helpOf("migrate", "--kafka.brokers", "k:9092", "--clickhouse.addr", "127.0.0.1:1"); code != 2 ||
		!strings.Contains(out, "flag provided but not defined: -kafka.brokers") {
		t.Errorf("migrate --kafka.brokers: exit %d, want 2 naming the flag:\n%s", code, out)
	}
	// An unknown command lists the commands.
	if code, out := helpOf("frobnicate"); code != 2 || !strings.Contains(out, "\n  migrate ") {
		t.Errorf("unknown command: exit %d, want 2 with the commands:\n%s", code, out)
	}
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func flagLines(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "\n  -" + n
	}
	return out
}
