package emitprom

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/errtrail/errtrail/emit/kafkapub"
)

// TestMetricsCountAndRegister: the adapter counts into the counters it
// registers, each drop under its own reason and no other, and the queue
// gauge reads the function the publisher gives it.
func TestMetricsCountAndRegister(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	var _ kafkapub.Metrics = m
	m.AddQueued(3)
	m.AddSent(2)
	m.AddDropped(kafkapub.DropQueueFull, 4)
	m.AddDropped(kafkapub.DropClosed, 0)
	m.SetQueueLength(func() int { return 7 })
	if q, s := testutil.ToFloat64(m.Queued), testutil.ToFloat64(m.Sent); q != 3 || s != 2 {
		t.Errorf("queued %v sent %v; want 3 and 2", q, s)
	}
	for _, r := range kafkapub.DropReasons() {
		want := 0.0
		if r == kafkapub.DropQueueFull {
			want = 4
		}
		if got := testutil.ToFloat64(m.Dropped.WithLabelValues(r)); got != want {
			t.Errorf("dropped{reason=%q} = %v; want %v", r, got, want)
		}
	}
	n, err := testutil.GatherAndCount(reg, "errtrail_emit_queued_total", "errtrail_emit_sent_total",
		"errtrail_emit_dropped_total", "errtrail_emit_queue_length")
	if err != nil || n != 3+len(kafkapub.DropReasons()) {
		t.Errorf("%d series registered (%v); want %d", n, err, 3+len(kafkapub.DropReasons()))
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader("# HELP errtrail_emit_queue_length Events waiting in the publish queue.\n# TYPE errtrail_emit_queue_length gauge\nerrtrail_emit_queue_length 7\n"), "errtrail_emit_queue_length"); err != nil {
		t.Error(err)
	}
	if NewMetrics(nil) == nil { // no registry: counts, registers nothing
		t.Fatal("NewMetrics(nil) = nil")
	}
}
