package kafkapub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/errtrail/errtrail/emit"
	"github.com/errtrail/errtrail/emit/internal/emittest"
)

// syncBuffer is a log sink the publisher's goroutines may write to while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCheckTopic (real Kafka): an existing topic passes; a missing one is
// ErrTopicMissing, named in the error; asking creates nothing (the stack's
// broker creates topics on demand for clients that ask it to); a broker
// that cannot be reached is an error that is not ErrTopicMissing.
func TestCheckTopic(t *testing.T) {
	brokers, topic := emittest.KafkaTopic(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := CheckTopic(ctx, Config{Brokers: brokers, Topic: topic}); err != nil {
		t.Fatalf("existing topic %s: %v", topic, err)
	}
	missing := fmt.Sprintf("errtrail.emit-test.typo.%d", time.Now().UnixNano())
	for i := 0; i < 2; i++ { // the second check finds it still missing: the first created nothing
		err := CheckTopic(ctx, Config{Brokers: brokers, Topic: missing})
		if !errors.Is(err, ErrTopicMissing) {
			t.Fatalf("check %d of missing topic: %v, want ErrTopicMissing", i+1, err)
		}
		if !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "not created for you") {
			t.Fatalf("error does not name the topic or say it is not created: %v", err)
		}
	}
	err := CheckTopic(ctx, Config{Brokers: []string{closedPort(t)}, Topic: topic})
	if err == nil || errors.Is(err, ErrTopicMissing) {
		t.Fatalf("unreachable broker: %v, want an error that is not ErrTopicMissing", err)
	}
	if err := CheckTopic(ctx, Config{}); !errors.Is(err, errNoBrokers) {
		t.Fatalf("no brokers: %v", err)
	}
}

// TestPublisherSaysTopicMissing (real Kafka): a publisher to a missing
// topic starts (no error, no wait), logs one ERROR line naming the topic,
// and drops what it is given as kafka_error; a publisher to an existing
// topic, or to a broker it cannot reach, logs no such line.
func TestPublisherSaysTopicMissing(t *testing.T) {
	brokers, topic := emittest.KafkaTopic(t)
	missing := fmt.Sprintf("errtrail.emit-test.typo.%d", time.Now().UnixNano())
	start := func(brokers []string, topic string) (*Publisher, *testMetrics, *syncBuffer) {
		var logs syncBuffer
		m := newTestMetrics()
		p, err := New(Config{Brokers: brokers, Topic: topic, Metrics: m, Linger: time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		<-p.checked // the start's check is over
		return p, m, &logs
	}
	closeNow := func(p *Publisher) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		p.Close(ctx)
	}

	p, m, logs := start(brokers, missing)
	errorLines := strings.Count(logs.String(), "level=ERROR")
	if errorLines != 1 || !strings.Contains(logs.String(), missing) || !strings.Contains(logs.String(), "does not exist") {
		t.Fatalf("missing topic: %d ERROR lines, want 1 naming %s:\n%s", errorLines, missing, logs)
	}
	p.Publish(&emit.Event{Source: emit.Source{Kind: emit.KindAgent, ID: "a"}, EventID: "e-1", Reply: emit.Reply{HTTPStatus: 500}})
	for deadline := time.Now().Add(time.Minute); dropped(m, DropKafkaError) < 1 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if n := dropped(m, DropKafkaError); n != 1 {
		t.Fatalf("event to a missing topic: kafka_error %d, want 1", n)
	}
	closeNow(p)

	p, _, logs = start(brokers, topic)
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("existing topic logged an error:\n%s", logs)
	}
	closeNow(p)

	p, _, logs = start([]string{closedPort(t)}, topic)
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("unreachable broker logged a missing topic:\n%s", logs)
	}
	closeNow(p)
}
