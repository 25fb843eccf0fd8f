package main

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Both consumers do what ingest's fetch stage does with a message and no
// more: look at its value, remember the highest offset per partition, and
// commit once per `every` messages (one offset per partition), plus once at
// the end. The clock starts at the first message, after the group join.

func consumeKafkaGo(ctx context.Context, brokers []string, topic, group string, n, every int) error {
	a0 := take()
	r := kafka.NewReader(kafka.ReaderConfig{ // cmd/ingest/main.go's settings
		Brokers:        brokers,
		GroupID:        group,
		Topic:          topic,
		MinBytes:       1,
		MaxBytes:       8 << 20,
		MaxWait:        250 * time.Millisecond,
		QueueCapacity:  1000,
		StartOffset:    kafka.FirstOffset,
		SessionTimeout: 30 * time.Second,
		CommitInterval: 0,
	})
	defer r.Close()
	var a sample
	var bytes, sum int
	last := map[int]kafka.Message{}
	commit := func() error {
		msgs := make([]kafka.Message, 0, len(last))
		for _, m := range last {
			msgs = append(msgs, kafka.Message{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset})
		}
		return r.CommitMessages(ctx, msgs...)
	}
	for i := 0; i < n; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return fmt.Errorf("kafka-go fetch %d: %w", i, err)
		}
		if i == 0 {
			a = take()
		}
		bytes += len(m.Value)
		if len(m.Value) > 0 {
			sum += int(m.Value[len(m.Value)-1])
		}
		last[m.Partition] = m
		if (i+1)%every == 0 {
			if err := commit(); err != nil {
				return fmt.Errorf("kafka-go commit: %w", err)
			}
		}
	}
	if err := commit(); err != nil {
		return err
	}
	b := take()
	report("kafka", "kafka-go", n, "msg", a, b, fmt.Sprintf("value_bytes_per_msg=%d check=%d %s", bytes/n, sum, whole(a0, b, n)))
	return nil
}

func consumeFranz(ctx context.Context, brokers []string, topic, group string, n, every int) error {
	a0 := take()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(32<<20),
		kgo.FetchMaxPartitionBytes(8<<20),
		kgo.FetchMaxWait(250*time.Millisecond),
		kgo.SessionTimeout(30*time.Second),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	var a sample
	var bytes, sum, got int
	last := map[int32]*kgo.Record{}
	commit := func() error {
		recs := make([]*kgo.Record, 0, len(last))
		for _, r := range last {
			recs = append(recs, r)
		}
		return cl.CommitRecords(ctx, recs...)
	}
	for got < n {
		fs := cl.PollFetches(ctx)
		if errs := fs.Errors(); len(errs) > 0 {
			return fmt.Errorf("franz-go fetch: %v", errs[0].Err)
		}
		it := fs.RecordIter()
		for !it.Done() && got < n {
			rec := it.Next()
			if got == 0 {
				a = take()
			}
			got++
			bytes += len(rec.Value)
			if len(rec.Value) > 0 {
				sum += int(rec.Value[len(rec.Value)-1])
			}
			last[rec.Partition] = rec
			if got%every == 0 {
				if err := commit(); err != nil {
					return fmt.Errorf("franz-go commit: %w", err)
				}
			}
		}
	}
	if err := commit(); err != nil {
		return err
	}
	b := take()
	report("kafka", "franz-go", n, "msg", a, b, fmt.Sprintf("value_bytes_per_msg=%d check=%d %s", bytes/n, sum, whole(a0, b, n)))
	return nil
}

// whole is the CPU per message counted from before the client was created
// (group join and any prefetch before the first message included).
func whole(a0, b sample, n int) string {
	return fmt.Sprintf("with_join: wall_s=%.3f ns_cpu_per_msg=%.0f", b.wall.Sub(a0.wall).Seconds(),
		float64((b.user+b.sys-a0.user-a0.sys).Nanoseconds())/float64(n))
}

// committed returns, for a group, the committed offsets summed over the
// topic's partitions (to check both consumers committed everything).
func committed(ctx context.Context, broker, topic, group string) (int64, error) {
	c := &kafka.Client{Addr: kafka.TCP(broker), Timeout: 10 * time.Second}
	md, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, err
	}
	var parts []int
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			parts = append(parts, p.ID)
		}
	}
	res, err := c.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: parts}})
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, p := range res.Topics[topic] {
		if p.Error != nil {
			return 0, p.Error
		}
		sum += p.CommittedOffset
	}
	return sum, nil
}

// kafkaDrop deletes the benchmark's consumer groups and topic.
func kafkaDrop(ctx context.Context, broker, topic string, groups []string) error {
	c := &kafka.Client{Addr: kafka.TCP(broker), Timeout: 30 * time.Second}
	if len(groups) > 0 {
		if _, err := c.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: groups}); err != nil {
			return fmt.Errorf("delete groups: %w", err)
		}
	}
	res, err := c.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err != nil {
		return fmt.Errorf("delete topic: %w", err)
	}
	return res.Errors[topic]
}
