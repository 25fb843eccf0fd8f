package ingest

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/segmentio/kafka-go"
)

// TestLagForgetsPartitionsThatMovedAway: after a rebalance, partitions that
// went to another member stop counting in consumer_lag_messages once no
// batch held them for lagExpiry; partitions still owned keep counting.
func TestLagForgetsPartitionsThatMovedAway(t *testing.T) {
	p := &Pipeline{lag: map[TopicPartition]partLag{}, m: NewMetrics(prometheus.NewRegistry())}
	at := func(parts ...int) *batch {
		b := newBatch()
		for _, part := range parts {
			// 100 messages behind the high watermark.
			b.msgs = append(b.msgs, kafka.Message{Partition: part, Offset: 899, HighWaterMark: 1000})
		}
		return b
	}
	t0 := time.Unix(1764489600, 0)
	p.updateLagAt(at(0, 1, 2), 0, t0)
	if got := gaugeValue(t, p.m.LagMessages); got != 300 {
		t.Fatalf("lag with three partitions = %v; want 300", got)
	}
	// Partition 2 moved away; 0 and 1 keep arriving.
	for s := 10; s <= 70; s += 10 {
		p.updateLagAt(at(0, 1), 0, t0.Add(time.Duration(s)*time.Second))
	}
	if got := gaugeValue(t, p.m.LagMessages); got != 200 {
		t.Errorf("lag a minute after partition 2 left = %v; want 200", got)
	}
	if _, ok := p.lag[TopicPartition{Partition: 2}]; ok {
		t.Error("partition 2 is still remembered")
	}
	// Within the expiry a partition between batches still counts.
	p.updateLagAt(at(2), 0, t0.Add(80*time.Second))
	p.updateLagAt(at(0), 0, t0.Add(90*time.Second))
	if got := gaugeValue(t, p.m.LagMessages); got != 300 {
		t.Errorf("lag with partition 2 back = %v; want 300", got)
	}
}

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}
