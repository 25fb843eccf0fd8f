package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/internal/cliflags"
	"github.com/errtrail/errtrail/internal/cmdkit"
	"github.com/errtrail/errtrail/schema"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// openClickHouse is connectClickHouse for the subcommands: a failure is
// logged, and the caller exits 1.
func openClickHouse(ctx context.Context, o *options, log *slog.Logger) (driver.Conn, bool) {
	conn, err := connectClickHouse(ctx, o)
	if err != nil {
		log.Error("connect to ClickHouse", "err", err)
		return nil, false
	}
	return conn, true
}

// connectClickHouse opens a native-protocol pool with LZ4 compression (the
// only combination that works with every supported server, 18.16 included).
func connectClickHouse(ctx context.Context, o *options) (driver.Conn, error) {
	return connectClickHouseTo(ctx, o, o.ch.Addrs)
}

// connectShards opens one connection per shard of --clickhouse.cluster, to
// its replicas as system.clusters names them and with the options of the
// main connection, and returns what ingest needs to write each shard its
// rows directly (ingest.Shards); close closes the connections.
func connectShards(ctx context.Context, o *options, conn driver.Conn, log *slog.Logger) (sh *ingest.Shards, closeAll func(), ok bool) {
	sopt := o.schemaOptions()
	shards, err := schema.ClusterShards(ctx, conn, sopt)
	if err != nil {
		log.Error("cluster shards", "err", err)
		return nil, nil, false
	}
	sh = &ingest.Shards{
		Table: schema.LocalLanding(sopt),
		Of: func(ctx context.Context, topic string, partition int32) (int, error) {
			return schema.ShardOf(ctx, conn, shards, topic, partition)
		},
	}
	closeAll = func() {
		for _, c := range sh.Conns {
			c.Close()
		}
	}
	for _, s := range shards {
		c, err := connectClickHouseTo(ctx, o, s.Replicas)
		if err != nil {
			closeAll()
			log.Error("connect to a shard", "shard", s.Num, "replicas", s.Replicas, "err", err)
			return nil, nil, false
		}
		sh.Conns = append(sh.Conns, c)
	}
	log.Info("writing to each shard directly", "cluster", sopt.Cluster, "shards", len(shards), "table", sh.Table)
	return sh, closeAll, true
}

// connectClickHouseTo is connectClickHouse to the given addresses: each
// write and answer bounded by --insert.timeout (cmdkit.ClickHouse.Open),
// blocks LZ4-compressed, at most 4 connections.
func connectClickHouseTo(_ context.Context, o *options, addrs []string) (driver.Conn, error) {
	return o.ch.Open(cmdkit.Pool{Addrs: addrs, Timeout: *o.insertTimeout, MaxOpen: 4, Compress: true})
}

// defaultSessionTimeout is the smallest session timeout brokers accept by
// default (group.min.session.timeout.ms): a replacement for a crashed
// member consumes within about that, plus a second to join and insert.
const defaultSessionTimeout = 6 * time.Second

// heartbeatInterval is a sixth of the session timeout (1s at the default):
// Kafka asks for at most a third, and a sixth survives five lost heartbeats.
func heartbeatInterval(session time.Duration) time.Duration {
	return max(session/6, 100*time.Millisecond)
}

// joinGroup builds the consumer group of topics (ingest.Group: a partition
// moves in a rebalance only after its fetched batches are stored and
// committed); kafka-go joins the group in the background and keeps
// retrying while brokers are away. Only a bad TLS or SASL setting fails
// here: it is logged, and the caller exits 1.
func joinGroup(o *options, topics []string, log *slog.Logger) (*ingest.Group, bool) {
	dialer, err := kafkaDialer(o)
	if err != nil {
		log.Error("kafka", "err", err)
		return nil, false
	}
	kafkaLog := ingest.NewLogLimiter(log, 5, 10*time.Second) // a broker outage repeats errors every second
	rc := kafka.ReaderConfig{
		Brokers:        cliflags.SplitList(*o.brokers),
		GroupID:        *o.group,
		Dialer:         dialer,
		MinBytes:       1,
		MaxBytes:       8 << 20,
		MaxWait:        250 * time.Millisecond,
		QueueCapacity:  256, // ≤ 256 MiB queued even of 1 MiB messages; 1,000 measured no cheaper (docs/performance.md)
		StartOffset:    kafka.FirstOffset,
		CommitInterval: 0, // synchronous: ingest commits once per batch, after the insert
		ErrorLogger:    kafka.LoggerFunc(func(f string, a ...any) { kafkaLog.Log(slog.LevelWarn, "kafka: "+fmt.Sprintf(f, a...)) }),

		// A crashed member keeps its partitions until its session expires, so
		// the session timeout is how long a replacement waits (docs/ingest.md).
		SessionTimeout:    *o.sessionTimeout,
		HeartbeatInterval: heartbeatInterval(*o.sessionTimeout),
		// How long a rebalance waits for live members to rejoin (a crashed one
		// is dropped when its session expires). kafka-go's deadline for a
		// JoinGroup is this plus 5s, so every member needs the same value:
		// kafka-go's default. A member that ends a generation first waits up
		// to two thirds of it (20s) for its batches to be stored.
		RebalanceTimeout: 30 * time.Second,
		// After a failed join (coordinator moved, broker restarting): kafka-go
		// waits 5s by default, which a restarted broker's consumers pay.
		JoinGroupBackoff: time.Second,
	}
	if len(topics) == 1 {
		rc.Topic = topics[0]
	} else {
		rc.GroupTopics = topics // kafka-go takes one or the other
	}
	g, err := ingest.NewGroup(ingest.GroupConfig{Reader: rc, Logger: log})
	if err != nil {
		log.Error("kafka", "err", err)
		return nil, false
	}
	return g, true
}

func kafkaDialer(o *options) (*kafka.Dialer, error) {
	tc, err := o.kafkaTLS.Config()
	if err != nil {
		return nil, fmt.Errorf("kafka TLS: %w", err)
	}
	d := &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: tc}
	var mech sasl.Mechanism
	switch strings.ToLower(*o.saslMech) {
	case "":
	case "plain":
		mech = plain.Mechanism{Username: *o.saslUser, Password: *o.saslPass}
	case "scram-sha-256":
		mech, err = scram.Mechanism(scram.SHA256, *o.saslUser, *o.saslPass)
	case "scram-sha-512":
		mech, err = scram.Mechanism(scram.SHA512, *o.saslUser, *o.saslPass)
	default:
		return nil, fmt.Errorf("unknown --kafka.sasl.mechanism %q (plain, scram-sha-256, scram-sha-512)", *o.saslMech)
	}
	if err != nil {
		return nil, err
	}
	d.SASLMechanism = mech
	return d, nil
}

// closeReader leaves the consumer group, giving up after 10s: a broker that
// does not answer must not hold the process past its shutdown.
func closeReader(reader *ingest.Group, log *slog.Logger) {
	closed := make(chan struct{})
	go func() { reader.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		log.Warn("kafka reader did not close in 10s; leaving it")
	}
}
