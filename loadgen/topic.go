package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// EnsureTopic creates topic when the broker does not have it, with
// partitions partitions (<= 0: the broker's default) and replication
// factor 1, and waits until its partitions have leaders. An existing topic is
// left as it is. Writing into a topic that the broker auto-creates loses the
// first batches to UNKNOWN_TOPIC_OR_PARTITION retries, hence this step.
func EnsureTopic(ctx context.Context, brokers []string, topic string, partitions int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// The default transport, on purpose: a kafka-go writer of this process
	// learns the new topic from that transport's metadata cache, which a
	// CreateTopics through it refreshes (through another transport, the
	// writer gets UNKNOWN_TOPIC_OR_PARTITION for up to the cache's 6 s).
	c := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	exists := func() (bool, error) {
		md, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		if err != nil {
			return false, err
		}
		for _, t := range md.Topics {
			if t.Name == topic && t.Error == nil && len(t.Partitions) > 0 {
				for _, p := range t.Partitions {
					if p.Leader.Host == "" {
						return false, nil
					}
				}
				return true, nil
			}
		}
		return false, nil
	}
	ok, err := exists()
	if err != nil {
		return fmt.Errorf("kafka metadata from %v: %w", brokers, err)
	}
	if ok {
		return nil
	}
	if partitions <= 0 {
		partitions = -1
	}
	res, err := c.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}}})
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	if e := res.Errors[topic]; e != nil && !errors.Is(e, kafka.TopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", topic, e)
	}
	for {
		if ok, _ := exists(); ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s has no leaders yet: %w", topic, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// DropTopics deletes the named topics and every topic whose name starts
// with prefix (no prefix: only the named ones). It returns the topics it
// deleted, sorted. A named topic the broker does not have is not an error,
// so a clean-up can run twice. The measurement scripts use it to remove
// the topics they flooded.
func DropTopics(ctx context.Context, brokers []string, prefix string, names []string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	c, done := adminClient(brokers, 30*time.Second)
	defer done()
	md, err := c.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return nil, fmt.Errorf("kafka metadata from %v: %w", brokers, err)
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	var drop []string
	for _, t := range md.Topics {
		if t.Internal {
			continue
		}
		if want[t.Name] || (prefix != "" && strings.HasPrefix(t.Name, prefix)) {
			drop = append(drop, t.Name)
		}
	}
	sort.Strings(drop)
	if len(drop) == 0 {
		return nil, nil
	}
	res, err := c.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: drop})
	if err != nil {
		return nil, fmt.Errorf("delete topics: %w", err)
	}
	var errs []error
	for _, t := range drop {
		if e := res.Errors[t]; e != nil && !errors.Is(e, kafka.UnknownTopicOrPartition) {
			errs = append(errs, fmt.Errorf("delete topic %s: %w", t, e))
		}
	}
	return drop, errors.Join(errs...)
}

// adminClient returns a client of brokers whose requests and whose
// connection setup are bounded by timeout (the default transport gives the
// setup 5 s whatever the client's Timeout: a broker stalled for 6 s on a
// busy machine failed DropTopics), and a func that closes its connections.
// Not for creating topics (EnsureTopic).
func adminClient(brokers []string, timeout time.Duration) (*kafka.Client, func()) {
	t := &kafka.Transport{DialTimeout: timeout}
	return &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: timeout, Transport: t}, t.CloseIdleConnections
}
