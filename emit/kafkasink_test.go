package emit

import (
	"context"
	"errors"
	"sync"

	"github.com/segmentio/kafka-go"
)

// kafkaSink is a test sink that writes the events to the stack's Kafka
// with kafka-go, all at once when it is closed. emit's own tests cannot use
// the publisher (emit/kafkapub imports emit); its queue, batches and drops
// are tested there, with the middleware in front of it, and cmd/tap's
// tests run the two together through Kafka.
type kafkaSink struct {
	brokers []string
	topic   string
	mu      sync.Mutex
	events  []kafka.Message
}

func newKafkaSink(brokers []string, topic string) (*kafkaSink, error) {
	if len(brokers) == 0 {
		return nil, errors.New("no brokers")
	}
	return &kafkaSink{brokers: brokers, topic: topic}, nil
}

func (s *kafkaSink) Publish(ev *Event) bool {
	b, err := ev.AppendJSON(nil)
	if err != nil {
		return false
	}
	s.mu.Lock()
	s.events = append(s.events, kafka.Message{Value: b})
	s.mu.Unlock()
	return true
}

// Close writes the events and waits for Kafka's acknowledgement.
func (s *kafkaSink) Close(ctx context.Context) error {
	w := &kafka.Writer{Addr: kafka.TCP(s.brokers...), Topic: s.topic, RequiredAcks: kafka.RequireAll, BatchSize: 1000}
	s.mu.Lock()
	msgs := s.events
	s.events = nil
	s.mu.Unlock()
	err := w.WriteMessages(ctx, msgs...)
	return errors.Join(err, w.Close())
}
