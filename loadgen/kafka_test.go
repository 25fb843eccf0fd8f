package loadgen

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/go-faster/city"
	"github.com/segmentio/kafka-go"
)

// TestKafkaRoundTrip publishes a small scenario (quota, overload, gateway
// views and every poison kind, including the over-1-MiB one) to a fresh
// topic on the real broker, reads the topic back and checks it holds
// exactly what the manifest says.
func TestKafkaRoundTrip(t *testing.T) {
	brokers := strings.Split(testenv.Kafka(t), ",")
	sc, err := ParseScenario([]byte(`
name: kafka-roundtrip
seed: 42
duration: 30s
agents:
  - {name: research-agent, shape: a2a-http, limit: {rate_per_min: 60, burst: 10}}
  - {name: billing-agent, shape: a2a-grpc, limit: {rate_per_min: 60, burst: 10}}
callers:
  - {name: client, count: 3, rate_per_min: 120}
bursts: [{at: 1s, caller: client-1, agent: research-agent, count: 30}]
faults:
  - {kind: overload, agent: billing-agent, from: 10s, to: 20s}
  - {kind: gateway, agent: research-agent, gateway: gw-1, rewrite_from: [429], rewrite_to: 502}
poison: {count: 14}
`), ".")
	if err != nil {
		t.Fatal(err)
	}
	topic := "loadgen.test." + strconv.FormatInt(time.Now().UnixNano(), 36)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := EnsureTopic(ctx, brokers, topic, 3); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = DropTopics(context.Background(), brokers, "", []string{topic}) })
	rep, err := Run(ctx, Config{Brokers: brokers, Topic: topic, Scenario: sc, Speed: 0, Compression: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Poison != 14 || rep.Valid < 100 || rep.Failed != 0 {
		t.Fatalf("report: valid %d, poison %d, failed %d", rep.Valid, rep.Poison, rep.Failed)
	}

	var got, poison int64
	var hash uint64
	ids := map[string]bool{}
	for _, m := range readTopic(ctx, t, brokers, topic) {
		got++
		if id := eventIDOf(m.Value); id != "" && !strings.Contains(id, ":poison-") {
			if ids[id] {
				t.Fatalf("event_id %s twice in the topic", id)
			}
			ids[id] = true
			hash += city.CH64([]byte(id))
		} else {
			poison++
		}
	}
	if got != rep.Produced || int64(len(ids)) != rep.Valid || poison != rep.Poison || hash != rep.EventIDHash {
		t.Fatalf("topic holds %d messages (%d valid ids, %d poison, hash %d); manifest %d (%d, %d, hash %d)",
			got, len(ids), poison, hash, rep.Produced, rep.Valid, rep.Poison, rep.EventIDHash)
	}
	for _, id := range rep.EventIDs {
		if !ids[id] {
			t.Fatalf("manifest id %s not in the topic", id)
		}
	}
}

// readTopic reads every message of topic, partition by partition.
func readTopic(ctx context.Context, t *testing.T, brokers []string, topic string) []kafka.Message {
	t.Helper()
	conn, err := kafka.DialContext(ctx, "tcp", brokers[0])
	if err != nil {
		t.Fatal(err)
	}
	parts, err := conn.ReadPartitions(topic)
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	var out []kafka.Message
	for _, p := range parts {
		lc, err := kafka.DialLeader(ctx, "tcp", brokers[0], topic, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		last, err := lc.ReadLastOffset()
		lc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if last == 0 {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p.ID, MaxBytes: 16 << 20, MaxWait: 500 * time.Millisecond})
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				t.Fatalf("partition %d: %v", p.ID, err)
			}
			out = append(out, m)
			if m.Offset+1 >= last {
				break
			}
		}
		r.Close()
	}
	return out
}

// TestKafkaHistory publishes a 5-minute history and the scenario after it
// (historyScenario, speed 3) to a fresh topic on the real broker, reads the
// topic back and checks that it holds exactly what the report counts, the
// history apart, with the history's content as the broker-free tests
// check it. Record timestamps are the produce time, history included: only
// observed_at is in the past.
func TestKafkaHistory(t *testing.T) {
	brokers := strings.Split(testenv.Kafka(t), ",")
	sc := loadHistoryScenario(t)
	topic := "loadgen.test.history." + strconv.FormatInt(time.Now().UnixNano(), 36)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := EnsureTopic(ctx, brokers, topic, 3); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = DropTopics(context.Background(), brokers, "", []string{topic}) })
	rep, err := Run(ctx, Config{Brokers: brokers, Topic: topic, Scenario: sc, Speed: 3, History: 5 * time.Minute,
		Compression: true, KeepIDs: -1})
	if err != nil {
		t.Fatal(err)
	}
	msgs := readTopic(ctx, t, brokers, topic)
	values := make([][]byte, len(msgs))
	for i, m := range msgs {
		values[i] = m.Value
		if m.Time.Before(rep.Started.Add(-time.Second)) || m.Time.After(rep.Finished.Add(time.Second)) {
			t.Fatalf("record timestamp %v outside the run [%v, %v]; want the produce time", m.Time, rep.Started, rep.Finished)
		}
	}
	hist, scen, poison := splitHistory(t, values, rep.History.ToMS)
	checkHistoryReport(t, rep, values, hist, poison)
	checkUniqueIDs(t, hist, scen)
	checkBaseline(t, rep, hist, 3)
	var hash uint64
	for _, part := range [][]histEvent{hist, scen} {
		for _, e := range part {
			hash += city.CH64([]byte(e.EventID))
		}
	}
	if hash != rep.EventIDHash || int64(len(hist)+len(scen)) != rep.Valid {
		t.Errorf("topic: %d valid events, hash %d; report %d, hash %d", len(hist)+len(scen), hash, rep.Valid, rep.EventIDHash)
	}
	t.Logf("history: %d messages in %.2f s (%.0f/s); scenario %d messages",
		rep.History.Produced, rep.History.ElapsedSec, rep.History.EventsPerSec, rep.Produced-rep.History.Produced)
}

// eventIDOf pulls event_id out of a message without a full decode (poison
// values are not JSON).
func eventIDOf(v []byte) string {
	s := string(v[:min(len(v), 200)])
	_, rest, ok := strings.Cut(s, `"event_id":"`)
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, `"`)
	return id
}
