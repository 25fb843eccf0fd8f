package kafkapub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// ErrTopicMissing is wrapped by CheckTopic's error when the brokers answer
// that the topic does not exist. The publisher never creates a topic (a typo would
// create a topic nobody reads): until it is created every event is
// dropped (errtrail_emit_dropped_total{reason="kafka_error"}).
var ErrTopicMissing = errors.New("kafkapub: topic does not exist")

// topicMissing is CheckTopic's error for a missing topic.
type topicMissing struct{ topic, brokers string }

func (e *topicMissing) Error() string {
	return fmt.Sprintf("kafkapub: topic %q does not exist on %s: every event is dropped until it is created "+
		"(topics are not created for you; is the name right?)", e.topic, e.brokers)
}

func (e *topicMissing) Is(target error) bool { return target == ErrTopicMissing }

// startCheckTimeout bounds the check New makes in the background.
const startCheckTimeout = 10 * time.Second

// CheckTopic asks cfg's brokers whether cfg's topic (DefaultTopic when
// empty) exists. It returns nil when it does; an error wrapping
// ErrTopicMissing, which names the topic and the brokers, when the brokers
// answer that it does not; any other error when Kafka could not be asked
// (unreachable, ctx ended): that says nothing about the topic.
//
// New makes this check itself, in the background, and logs a
// missing topic at ERROR level; it never fails or delays a start. Call
// CheckTopic when a start should fail instead (cmd/tap does); bound ctx,
// as a broker that accepts connections and never answers keeps it waiting
// until ctx ends.
func CheckTopic(ctx context.Context, cfg Config) error {
	if len(cfg.Brokers) == 0 {
		return errNoBrokers
	}
	topic := cfg.Topic
	if topic == "" {
		topic = DefaultTopic
	}
	rt := cfg.Transport
	if rt == nil {
		own := &kafka.Transport{}
		defer own.CloseIdleConnections()
		rt = own
	}
	c := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Transport: rt}
	// Metadata asks with allow_auto_topic_creation false: asking creates
	// nothing, even on a broker that would create topics on demand.
	res, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return fmt.Errorf("kafkapub: checking topic %q on %s: %w", topic, strings.Join(cfg.Brokers, ","), err)
	}
	for _, t := range res.Topics {
		if t.Name != topic {
			continue
		}
		if errors.Is(t.Error, kafka.UnknownTopicOrPartition) {
			return &topicMissing{topic, strings.Join(cfg.Brokers, ",")}
		}
		if t.Error != nil {
			return fmt.Errorf("kafkapub: checking topic %q on %s: %w", topic, strings.Join(cfg.Brokers, ","), t.Error)
		}
		return nil
	}
	return &topicMissing{topic, strings.Join(cfg.Brokers, ",")} // not listed
}

// checkAtStart is New's background check: a missing topic is
// logged at ERROR, once; Kafka that cannot be asked is left to the write
// path, which logs its failures. It ends when Close cancels writeCtx.
func (p *Publisher) checkAtStart() {
	defer close(p.checked)
	ctx, cancel := context.WithTimeout(p.writeCtx, startCheckTimeout)
	defer cancel()
	if err := CheckTopic(ctx, p.cfg); errors.Is(err, ErrTopicMissing) {
		p.cfg.Logger.Error(err.Error())
	}
}
