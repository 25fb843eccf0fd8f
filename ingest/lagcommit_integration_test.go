package ingest_test

import (
	"testing"
	"time"

	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
)

// TestLagGaugesFollowCommits (real stack): N events wait in Kafka before
// ingest starts, so its first lag poll sees them all uncommitted. Once
// every row is stored and the group committed them, /metrics must say so:
// consumer_committed_offsets = consumer_end_offsets = N, lag 0 messages
// and 0 s, and no lag poll failed. The lag interval is 10 minutes, longer
// than the test: the gauges may only follow the commits because a commit
// asks for a poll. (Before, they were set on the timer alone and showed
// committed 0 and the events' age at start for up to an interval after
// the rows were stored: issue 24.)
func TestLagGaugesFollowCommits(t *testing.T) {
	const n = 200
	s := newStack(t, 4)
	s.produce(t, goodEvents("lag-commit", 0, n))

	reg := prometheus.NewRegistry()
	m := ingest.NewMetrics(reg)
	cfg := s.config(testLogger(t), m)
	cfg.LagInterval = 10 * time.Minute
	run := s.start(t, cfg)
	defer func() {
		if err := run.stop(t); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	// The first poll, at start, saw messages waiting (it ran before the
	// first commit, or raced it: either way the gauges exist).
	waitUntil(t, time.Minute, "the first lag poll", func() bool {
		_, ok := metricOf(t, reg, "errtrail_ingest_consumer_committed_offsets")
		return ok
	})
	s.waitFor(t, 3*time.Minute, "every event stored", func(c counts) bool { return c.errors >= n })
	waitUntil(t, 2*time.Minute, "the group's commit of every partition", func() bool {
		return committedToEnd(t, s, 4)
	})

	gauges := func() (committed, end, lagMsgs, lagSecs float64) {
		committed, _ = metricOf(t, reg, "errtrail_ingest_consumer_committed_offsets")
		end, _ = metricOf(t, reg, "errtrail_ingest_consumer_end_offsets")
		lagMsgs, _ = metricOf(t, reg, "errtrail_ingest_consumer_lag_messages")
		lagSecs, _ = metricOf(t, reg, "errtrail_ingest_consumer_lag_seconds")
		return
	}
	ok := func() bool {
		c, e, lm, ls := gauges()
		return c == n && e == n && lm == 0 && ls == 0
	}
	deadline := time.Now().Add(2 * time.Minute) // a tenth of the lag interval: only a commit's poll gets there
	for !ok() && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	c, e, lm, ls := gauges()
	if !ok() {
		t.Fatalf("after every row was stored and committed: committed_offsets %v, end_offsets %v, lag %v messages, %v s; want %d, %d, 0, 0",
			c, e, lm, ls, n, n)
	}
	for _, step := range []string{"metadata", "committed", "end_offsets", "timestamp"} {
		if v := value(m.LagPollErrors.WithLabelValues(step)); v != 0 {
			t.Errorf("lag poll errors at %s: %v", step, v)
		}
	}
	t.Logf("gauges: committed %v end %v lag %v messages %v s", c, e, lm, ls)
}

// committedToEnd reports whether the group committed, on every partition,
// the offset after the last message (a failed request reads as not yet).
func committedToEnd(t *testing.T, s *stack, partitions int) bool {
	t.Helper()
	client := testenv.KafkaClient(t, s.brokers)
	parts := make([]int, partitions)
	offReq := map[string][]kafka.OffsetRequest{}
	for i := range parts {
		parts[i] = i
		offReq[s.topic] = append(offReq[s.topic], kafka.LastOffsetOf(i))
	}
	ends, err := client.ListOffsets(t.Context(), &kafka.ListOffsetsRequest{Topics: offReq})
	if err != nil {
		t.Logf("list offsets: %v", err)
		return false
	}
	end := map[int]int64{}
	for _, p := range ends.Topics[s.topic] {
		end[p.Partition] = p.LastOffset
	}
	res, err := client.OffsetFetch(t.Context(), &kafka.OffsetFetchRequest{GroupID: s.group, Topics: map[string][]int{s.topic: parts}})
	if err != nil {
		t.Logf("offset fetch: %v", err)
		return false
	}
	if len(res.Topics[s.topic]) != partitions || len(end) != partitions {
		return false
	}
	for _, p := range res.Topics[s.topic] {
		if p.CommittedOffset != end[p.Partition] {
			return false
		}
	}
	return true
}
