package stackload

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/loadgen"
)

// NewTopic makes a fresh one-partition topic named prefix + a number on the
// stack's broker, dropped when the test ends, and returns the brokers.
func NewTopic(t testing.TB, prefix string) (brokers []string, topic string) {
	t.Helper()
	brokers = strings.Split(testenv.Kafka(t), ",")
	topic = fmt.Sprintf("%s%d", prefix, time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := loadgen.EnsureTopic(ctx, brokers, topic, 1); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		loadgen.DropTopics(ctx, brokers, "", []string{topic})
	})
	return brokers, topic
}

// ReadTopic reads n message values of partition 0 of topic back from
// Kafka, failing the test if they do not arrive within a minute.
func ReadTopic(t testing.TB, brokers []string, topic string, n int) [][]byte {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: 0, MinBytes: 1, MaxBytes: 8 << 20, MaxWait: 200 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out [][]byte
	for len(out) < n {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("read %d of %d messages from Kafka: %v", len(out), n, err)
		}
		out = append(out, m.Value)
	}
	return out
}
