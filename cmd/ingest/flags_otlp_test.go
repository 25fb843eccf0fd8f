package main

import (
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/errtrail/errtrail/otlpin"
)

// TestUnitOTLPTopicsFlag: --kafka.otlp-topics adds its topics to the
// consumed ones with their formats; a bad entry, a topic in both lists or
// a topic given twice stops start-up.
func TestUnitOTLPTopicsFlag(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	parse := func(args ...string) ([]string, map[string]otlpin.Format, bool) {
		fs, o := newFlags("run", io.Discard)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return o.topics(log)
	}
	topics, f, ok := parse("--kafka.topic", "errtrail.replies", "--kafka.otlp-topics", "otlp_spans:otlp_proto, otlp_logs:otlp_json")
	if !ok || !slices.Equal(topics, []string{"errtrail.replies", "otlp_spans", "otlp_logs"}) ||
		f["otlp_spans"] != (otlpin.Format{Signal: otlpin.Traces, Encoding: otlpin.Proto}) || f["otlp_logs"] != (otlpin.Format{Signal: otlpin.Logs, Encoding: otlpin.JSON}) || len(f) != 2 {
		t.Errorf("topics %v formats %v ok %v", topics, f, ok)
	}
	if topics, f, ok := parse("--kafka.topic", "", "--kafka.otlp-topics", "tel:otlp_json/traces"); !ok || !slices.Equal(topics, []string{"tel"}) || f["tel"].Signal != otlpin.Traces {
		t.Errorf("OTLP only: %v %v %v", topics, f, ok)
	}
	if _, f, ok := parse(); !ok || len(f) != 0 {
		t.Errorf("default: no OTLP topic: %v %v", f, ok)
	}
	for _, bad := range [][]string{
		{"--kafka.otlp-topics", "otlp_spans"},
		{"--kafka.otlp-topics", "otlp_spans:protobuf"},
		{"--kafka.otlp-topics", "telemetry:otlp_proto"},
		{"--kafka.otlp-topics", "otlp_spans:otlp_proto,otlp_spans:otlp_json"},
		{"--kafka.topic", "otlp_spans", "--kafka.otlp-topics", "otlp_spans:otlp_proto"},
		{"--kafka.topic", "", "--kafka.otlp-topics", ""},
	} {
		if _, _, ok := parse(bad...); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}
