package ingest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl/plain"
)

// fakeKafka is a FAKE Kafka client for the lag monitor's unit tests: it
// answers Metadata, OffsetFetch, ListOffsets and Fetch from maps. The real
// brokers are exercised by TestStallLagOnRealStack.
type fakeKafka struct {
	parts      map[string]int           // topic → number of partitions
	committed  map[TopicPartition]int64 // absent: the group never committed
	first, end map[TopicPartition]int64 // log start and high watermark
	born       time.Time                // the message at offset o was produced at born + o seconds
	fail       string                   // a step to fail, "" for none
	flaky      map[string]int           // step → how many more times it answers a temporary error
	fetched    []string                 // "topic/partition@offset" of each Fetch
}

// failing returns err while step is set to fail, and a temporary Kafka
// error while step is flaky.
func (f *fakeKafka) failing(step string, err error) error {
	if f.fail == step {
		return err
	}
	if f.flaky[step] > 0 {
		f.flaky[step]--
		return fmt.Errorf("fake: %w", kafka.NotCoordinatorForGroup)
	}
	return nil
}

func (f *fakeKafka) Metadata(_ context.Context, req *kafka.MetadataRequest) (*kafka.MetadataResponse, error) {
	if err := f.failing(lagStepMetadata, errors.New("fake: metadata refused")); err != nil {
		return nil, err
	}
	res := &kafka.MetadataResponse{}
	for _, t := range req.Topics {
		kt := kafka.Topic{Name: t}
		for p := 0; p < f.parts[t]; p++ {
			kt.Partitions = append(kt.Partitions, kafka.Partition{Topic: t, ID: p})
		}
		res.Topics = append(res.Topics, kt)
	}
	return res, nil
}

func (f *fakeKafka) OffsetFetch(_ context.Context, req *kafka.OffsetFetchRequest) (*kafka.OffsetFetchResponse, error) {
	if err := f.failing(lagStepCommitted, errors.New("fake: coordinator refused")); err != nil {
		return nil, err
	}
	res := &kafka.OffsetFetchResponse{Topics: map[string][]kafka.OffsetFetchPartition{}}
	for t, ps := range req.Topics {
		for _, p := range ps {
			off, ok := f.committed[TopicPartition{t, int32(p)}]
			if !ok {
				off = -1
			}
			res.Topics[t] = append(res.Topics[t], kafka.OffsetFetchPartition{Partition: p, CommittedOffset: off})
		}
	}
	return res, nil
}

func (f *fakeKafka) ListOffsets(_ context.Context, req *kafka.ListOffsetsRequest) (*kafka.ListOffsetsResponse, error) {
	if err := f.failing(lagStepEndOffsets, errors.New("fake: offsets refused")); err != nil {
		return nil, err
	}
	res := &kafka.ListOffsetsResponse{Topics: map[string][]kafka.PartitionOffsets{}}
	for t, rs := range req.Topics {
		for _, r := range rs {
			tp := TopicPartition{t, int32(r.Partition)}
			po := kafka.PartitionOffsets{Partition: r.Partition, FirstOffset: -1, LastOffset: -1}
			switch r.Timestamp {
			case kafka.FirstOffset:
				po.FirstOffset = f.first[tp]
			case kafka.LastOffset:
				po.LastOffset = f.end[tp]
			}
			res.Topics[t] = append(res.Topics[t], po)
		}
	}
	return res, nil
}

// Fetch answers a record batch of 10 messages that starts at or before the
// offset asked for, as a broker does.
func (f *fakeKafka) Fetch(_ context.Context, req *kafka.FetchRequest) (*kafka.FetchResponse, error) {
	if err := f.failing(lagStepTimestamp, errors.New("fake: fetch refused")); err != nil {
		return nil, err
	}
	f.fetched = append(f.fetched, fmt.Sprintf("%s/%d@%d", req.Topic, req.Partition, req.Offset))
	tp := TopicPartition{req.Topic, int32(req.Partition)}
	if req.Offset < f.first[tp] || req.Offset >= f.end[tp] {
		return &kafka.FetchResponse{Error: kafka.OffsetOutOfRange, Records: kafka.NewRecordReader()}, nil
	}
	var recs []kafka.Record
	for o := req.Offset - req.Offset%10; o < min(req.Offset-req.Offset%10+10, f.end[tp]); o++ {
		recs = append(recs, kafka.Record{Offset: o, Time: f.born.Add(time.Duration(o) * time.Second)})
	}
	return &kafka.FetchResponse{Topic: req.Topic, Partition: req.Partition, HighWatermark: f.end[tp],
		Records: kafka.NewRecordReader(recs...)}, nil
}

// newFakeLag returns a monitor of group "g" on topics a (2 partitions) and
// b (1), over a fake Kafka whose messages are born one a second from t0,
// and a clock the test moves.
func newFakeLag(t0 time.Time) (*lagMonitor, *fakeKafka, *prometheus.Registry, *time.Time) {
	f := &fakeKafka{
		parts:     map[string]int{"a": 2, "b": 1},
		committed: map[TopicPartition]int64{},
		first:     map[TopicPartition]int64{{"a", 0}: 0, {"a", 1}: 0, {"b", 0}: 0},
		end:       map[TopicPartition]int64{{"a", 0}: 0, {"a", 1}: 0, {"b", 0}: 0},
		born:      t0,
	}
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	l := newLagMonitor(f, "g", []string{"a", "b"}, 10*time.Second, m, NewLogLimiter(slog.New(slog.DiscardHandler), 5, time.Second), nil)
	now := t0
	l.now = func() time.Time { return now }
	return l, f, reg, &now
}

// TestLagFromCommittedOffsetsFakeKafka: lag is end offset minus committed
// offset summed over every partition of every topic (the whole group);
// the age is that of the message at the committed offset, the oldest over
// the partitions; a partition never committed counts from its log start,
// one whose committed offset was deleted by retention from the first
// offset kept; a partition caught up costs no fetch.
func TestLagFromCommittedOffsetsFakeKafka(t *testing.T) {
	t0 := time.Unix(1764489600, 0)
	l, f, reg, now := newFakeLag(t0)
	f.end[TopicPartition{"a", 0}] = 100
	f.committed[TopicPartition{"a", 0}] = 60 // 40 behind; oldest born t0+60s
	f.end[TopicPartition{"a", 1}] = 50
	f.committed[TopicPartition{"a", 1}] = 50 // caught up
	f.first[TopicPartition{"b", 0}] = 20     // never committed: from the log start
	f.end[TopicPartition{"b", 0}] = 30       // 10 behind; oldest born t0+20s
	*now = t0.Add(200 * time.Second)

	l.pollOnce(context.Background())
	want := map[string]float64{
		"errtrail_ingest_consumer_lag_messages":              50,
		"errtrail_ingest_consumer_lag_seconds":               180, // now − (t0+20s), partition b/0
		"errtrail_ingest_consumer_committed_offsets":         110, // 60 + 50 + 0
		"errtrail_ingest_consumer_end_offsets":               180,
		"errtrail_ingest_lag_poll_success_timestamp_seconds": float64(now.Unix()),
	}
	for name, v := range want {
		if got, ok := gathered(t, reg, name); !ok || got != v {
			t.Errorf("%s = %v (present %v); want %v", name, got, ok, v)
		}
	}
	if len(f.fetched) != 2 {
		t.Errorf("fetched %v; want one fetch each for a/0@60 and b/0@20, none for the caught-up a/1", f.fetched)
	}

	// Retention deleted b/0 up to 25, past anything committed: count and
	// date from the first offset kept.
	f.committed[TopicPartition{"b", 0}] = 22
	f.first[TopicPartition{"b", 0}] = 25
	l.pollOnce(context.Background())
	if got, _ := gathered(t, reg, "errtrail_ingest_consumer_lag_messages"); got != 45 {
		t.Errorf("lag after retention = %v; want 40 + 5", got)
	}
	if got, _ := gathered(t, reg, "errtrail_ingest_consumer_lag_seconds"); got != 175 {
		t.Errorf("age after retention = %v; want now − (t0+25s) = 175", got)
	}
	if got, _ := gathered(t, reg, "errtrail_ingest_consumer_committed_offsets"); got != 60+50+22 {
		t.Errorf("committed = %v; want %d", got, 60+50+22)
	}

	// Everything committed: lag and age 0, not absent.
	f.committed[TopicPartition{"a", 0}] = 100
	f.committed[TopicPartition{"b", 0}] = 30
	l.pollOnce(context.Background())
	for _, name := range []string{"errtrail_ingest_consumer_lag_messages", "errtrail_ingest_consumer_lag_seconds"} {
		if got, ok := gathered(t, reg, name); !ok || got != 0 {
			t.Errorf("caught up: %s = %v (present %v); want 0", name, got, ok)
		}
	}
	if len(l.stamps) != 0 {
		t.Errorf("caught up, the monitor still remembers %v", l.stamps)
	}
}

// TestLagAgeGrowsWhileNothingIsCommittedFakeKafka is the outage's shape:
// producers keep publishing, the group commits nothing. The lag grows with
// every message produced, the age with the clock, and the message at the
// committed offset is fetched once, not at every poll.
func TestLagAgeGrowsWhileNothingIsCommittedFakeKafka(t *testing.T) {
	t0 := time.Unix(1764489600, 0)
	l, f, reg, now := newFakeLag(t0)
	tp := TopicPartition{"a", 0}
	f.committed[tp] = 1000
	var lastLag, lastAge float64
	for s := 0; s <= 180; s += 10 {
		*now = t0.Add(time.Duration(1000+s) * time.Second)
		f.end[tp] = int64(1000 + 200*s/10) // 20 messages a second
		l.pollOnce(context.Background())
		lag, _ := gathered(t, reg, "errtrail_ingest_consumer_lag_messages")
		age, _ := gathered(t, reg, "errtrail_ingest_consumer_lag_seconds")
		if s > 0 && (lag <= lastLag || age <= lastAge) {
			t.Fatalf("at %ds: lag %v (was %v), age %v (was %v); both must grow while nothing is committed", s, lag, lastLag, age, lastAge)
		}
		if s > 0 && age != float64(s) {
			t.Errorf("at %ds: age %v; want %d (the message at the committed offset was born at the outage's start)", s, age, s)
		}
		lastLag, lastAge = lag, age
	}
	if len(f.fetched) != 1 {
		t.Errorf("fetched %v; want the committed message once (its timestamp does not change)", f.fetched)
	}
}

// TestLagPollFailureKeepsLastValueFakeKafka: before any successful poll the
// lag gauges are absent (a failing poll never reads as lag 0); after one,
// a failing poll leaves every gauge at its last value, counts the failure
// by step and does not move the success timestamp.
func TestLagPollFailureKeepsLastValueFakeKafka(t *testing.T) {
	t0 := time.Unix(1764489600, 0)
	l, f, reg, now := newFakeLag(t0)
	f.fail = lagStepCommitted
	l.pollOnce(context.Background())
	for _, name := range []string{"errtrail_ingest_consumer_lag_messages", "errtrail_ingest_consumer_lag_seconds",
		"errtrail_ingest_consumer_committed_offsets", "errtrail_ingest_consumer_end_offsets"} {
		if v, ok := gathered(t, reg, name); ok {
			t.Errorf("%s = %v before any successful poll; want absent", name, v)
		}
	}
	if v, _ := gathered(t, reg, "errtrail_ingest_lag_poll_success_timestamp_seconds"); v != 0 {
		t.Errorf("success timestamp %v before any success; want 0", v)
	}

	f.fail = ""
	f.end[TopicPartition{"a", 0}] = 100
	f.committed[TopicPartition{"a", 0}] = 90
	*now = t0.Add(120 * time.Second)
	l.pollOnce(context.Background())
	okAt := float64(now.Unix())

	for _, step := range lagSteps {
		f.fail = step
		before := counterValue(t, l.m.LagPollErrors.WithLabelValues(step))
		f.committed[TopicPartition{"a", 0}] = 95 // moved: the timestamp step has to fetch
		*now = now.Add(10 * time.Second)
		l.pollOnce(context.Background())
		if got, ok := gathered(t, reg, "errtrail_ingest_consumer_lag_messages"); !ok || got != 10 {
			t.Errorf("step %s failing: lag %v (present %v); want the last value 10", step, got, ok)
		}
		if got, _ := gathered(t, reg, "errtrail_ingest_consumer_lag_seconds"); got != 30 {
			t.Errorf("step %s failing: age %v; want the last value 30", step, got)
		}
		if got, _ := gathered(t, reg, "errtrail_ingest_lag_poll_success_timestamp_seconds"); got != okAt {
			t.Errorf("step %s failing: success timestamp %v; want %v", step, got, okAt)
		}
		if got := counterValue(t, l.m.LagPollErrors.WithLabelValues(step)); got != before+1 {
			t.Errorf("lag_poll_errors_total{step=%q} = %v after one more failure; want %v", step, got, before+1)
		}
		f.committed[TopicPartition{"a", 0}] = 90
	}
}

// TestLagPollRetriesTemporaryErrorsFakeKafka: a broker that answers a
// temporary error (no coordinator for a new group yet) is asked again
// within the poll, which then succeeds and counts no failure; a broker
// that keeps answering it fails the poll after lagTries attempts.
func TestLagPollRetriesTemporaryErrorsFakeKafka(t *testing.T) {
	t0 := time.Unix(1764489600, 0)
	l, f, reg, _ := newFakeLag(t0)
	f.end[TopicPartition{"a", 0}] = 7
	f.flaky = map[string]int{lagStepCommitted: lagTries - 1}
	l.pollOnce(context.Background())
	if got, ok := gathered(t, reg, "errtrail_ingest_consumer_lag_messages"); !ok || got != 7 {
		t.Errorf("lag %v (present %v) after temporary errors; want 7", got, ok)
	}
	if got := counterValue(t, l.m.LagPollErrors.WithLabelValues(lagStepCommitted)); got != 0 {
		t.Errorf("lag_poll_errors_total{step=committed} = %v; a poll that succeeded on a retry is no failure", got)
	}
	f.flaky = map[string]int{lagStepCommitted: lagTries}
	l.pollOnce(context.Background())
	if got := counterValue(t, l.m.LagPollErrors.WithLabelValues(lagStepCommitted)); got != 1 {
		t.Errorf("lag_poll_errors_total{step=committed} = %v after %d temporary errors in a row; want 1", got, lagTries)
	}
}

// TestLagAgeFromInFlightBatchFakeKafka: when a batch this process holds
// starts at the committed offset, its first message dates the lag and
// nothing is fetched; batch starts below the committed offset are
// forgotten.
func TestLagAgeFromInFlightBatchFakeKafka(t *testing.T) {
	t0 := time.Unix(1764489600, 0)
	l, f, reg, now := newFakeLag(t0)
	l.flight = newInflight()
	tp := TopicPartition{"a", 1}
	f.end[tp] = 500
	f.committed[tp] = 300
	b := newBatch()
	for o := int64(200); o < 400; o++ {
		// Produced at 1,000 s (not what the fake's Fetch would answer).
		b.msgs = append(b.msgs, kafka.Message{Topic: "a", Partition: 1, Offset: o, Time: t0.Add(1000 * time.Second)})
		if o == 299 {
			l.flight.note(b) // a batch of 200–299, then one of 300–399
			b = newBatch()
		}
	}
	l.flight.note(b)
	*now = t0.Add(1100 * time.Second)
	l.pollOnce(context.Background())
	if got, _ := gathered(t, reg, "errtrail_ingest_consumer_lag_seconds"); got != 100 {
		t.Errorf("age = %v; want 100 (the in-flight batch's first message)", got)
	}
	if len(f.fetched) != 0 {
		t.Errorf("fetched %v; the in-flight batch holds the committed message", f.fetched)
	}
	if _, ok := l.flight.lookup(tp, 200); ok {
		t.Error("the batch start at 200, below the committed 300, is still remembered")
	}
}

// TestInflightRemembersBatchStarts: each batch's first offset per
// partition is kept (interleaved runs of one partition count once), at
// most inflightKeep per partition, and a reader that went back starts
// over.
func TestInflightRemembersBatchStarts(t *testing.T) {
	f := newInflight()
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	b := newBatch()
	b.msgs = []kafka.Message{
		{Topic: "a", Partition: 0, Offset: 10, Time: at(10)}, {Topic: "a", Partition: 0, Offset: 11},
		{Topic: "a", Partition: 1, Offset: 5, Time: at(5)},
		{Topic: "a", Partition: 0, Offset: 12}, // a second run of a/0: not a batch start
	}
	f.note(b)
	if ts, ok := f.lookup(TopicPartition{"a", 0}, 10); !ok || !ts.Equal(at(10)) {
		t.Errorf("a/0@10: %v %v", ts, ok)
	}
	if _, ok := f.lookup(TopicPartition{"a", 0}, 12); ok {
		t.Error("a/0@12 is not where a batch starts")
	}
	for i := 0; i < 2*inflightKeep; i++ {
		off := int64(100 + 10*i)
		b.msgs = []kafka.Message{{Topic: "a", Partition: 0, Offset: off, Time: at(int(off))}}
		f.note(b)
	}
	if n := len(f.at[TopicPartition{"a", 0}]); n != inflightKeep {
		t.Errorf("%d batch starts remembered; want at most %d", n, inflightKeep)
	}
	b.msgs = []kafka.Message{{Topic: "a", Partition: 0, Offset: 3, Time: at(3)}}
	f.note(b)
	if s := f.at[TopicPartition{"a", 0}]; len(s) != 1 || s[0].off != 3 {
		t.Errorf("after the reader went back to 3: %v", s)
	}
	f.forget(TopicPartition{"a", 1}, 6)
	if _, ok := f.at[TopicPartition{"a", 1}]; ok {
		t.Error("a/1 is remembered after everything in it was committed")
	}
}

// TestLagClientUsesTheReadersDialer: the lag client reaches the reader's
// brokers with the reader's TLS, SASL and client id.
func TestLagClientUsesTheReadersDialer(t *testing.T) {
	tc := &tls.Config{ServerName: "kafka.example"}
	mech := plain.Mechanism{Username: "u", Password: "p"}
	c, tr := newLagClient(kafka.ReaderConfig{
		Brokers: []string{"b1:9092", "b2:9092"},
		Dialer:  &kafka.Dialer{ClientID: "errtrail-ingest", Timeout: 7 * time.Second, TLS: tc, SASLMechanism: mech},
	}, []string{"t"})
	if c.Transport != tr || tr.TLS != tc || tr.SASL != mech || tr.ClientID != "errtrail-ingest" || tr.DialTimeout != 7*time.Second || tr.Dial == nil {
		t.Errorf("transport %+v does not carry the dialer's settings", tr)
	}
	if got := c.Addr.String(); got != "b1:9092,b2:9092" {
		t.Errorf("client address %q; want the reader's brokers", got)
	}
	if _, tr := newLagClient(kafka.ReaderConfig{Brokers: []string{"b:1"}}, nil); tr.TLS != nil || tr.SASL != nil || tr.Dial == nil {
		t.Errorf("no dialer: want kafka's default dialer, got %+v", tr)
	}
}

// gathered returns the value of the unlabelled metric name from reg and
// whether it is exported at all.
func gathered(t *testing.T, reg *prometheus.Registry, name string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.Metric) == 0 {
			continue
		}
		m := mf.Metric[0]
		if m.Gauge != nil {
			return m.Gauge.GetValue(), true
		}
		return m.Counter.GetValue(), true
	}
	return 0, false
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
