package ingest_test

// Helpers for the integration tests: each test gets its own topic and its
// own ClickHouse database on the REAL local stack (scripts/stack up), so
// tests do not see each other's rows. Outside CI a missing server skips the
// test; in CI (CI=true) it fails (internal/testenv).

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/schema"
	"github.com/segmentio/kafka-go"
)

type stack struct {
	brokers []string
	chAddr  string
	topic   string
	group   string
	sopt    schema.Options
	conn    driver.Conn
	server  schema.ServerVersion
}

func newStack(t *testing.T, partitions int) *stack {
	t.Helper()
	return newStackOn(t, partitions, nil)
}

// newStackOn is newStack on the servers own has of its own (testenv.Own)
// and the shared stack's for the others (all of them when own is nil): a
// fault test breaks only its own servers, so the other tests, which run at
// the same time (t.Parallel, and other packages in scripts/test), keep theirs.
func newStackOn(t *testing.T, partitions int, own *testenv.OwnStack) *stack {
	t.Helper()
	brokers := strings.Split(own.Kafka(t), ",")
	chAddr := strings.Split(own.ClickHouse(t), ",")[0]
	id := fmt.Sprintf("%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1e6))
	s := &stack{
		brokers: brokers, chAddr: chAddr,
		topic: "errtrail.it." + id, group: "errtrail-it-" + id,
		sopt: schema.Options{Database: "errtrail_ingest_it_" + id},
	}
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr: []string{chAddr}, Protocol: clickhouse.Native,
		Compression: &clickhouse.Compression{Method: clickhouse.CompressionLZ4},
		DialTimeout: testenv.CHDialTimeout, ReadTimeout: 60 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.conn = conn
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := schema.Migrate(ctx, conn, s.sopt)
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	s.server = res.Server
	createTopic(t, brokers[0], s.topic, partitions)
	t.Cleanup(func() {
		if os.Getenv("ERRTRAIL_KEEP_TEST_DATA") == "" {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+s.sopt.Database)
			deleteTopic(brokers[0], s.topic)
		}
		conn.Close()
	})
	return s
}

func createTopic(t *testing.T, broker, topic string, partitions int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := func() error {
			c, err := kafka.Dial("tcp", broker)
			if err != nil {
				return err
			}
			defer c.Close()
			ctl, err := c.Controller()
			if err != nil {
				return err
			}
			cc, err := kafka.Dial("tcp", net.JoinHostPort(ctl.Host, strconv.Itoa(ctl.Port)))
			if err != nil {
				return err
			}
			defer cc.Close()
			err = cc.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1})
			if err != nil && !strings.Contains(err.Error(), "already exists") {
				return err
			}
			ps, err := c.ReadPartitions(topic)
			if err != nil {
				return err
			}
			if len(ps) != partitions {
				return fmt.Errorf("%d of %d partitions visible", len(ps), partitions)
			}
			return nil
		}()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("create topic %s: %v", topic, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func deleteTopic(broker, topic string) {
	c, err := kafka.Dial("tcp", broker)
	if err != nil {
		return
	}
	defer c.Close()
	ctl, err := c.Controller()
	if err != nil {
		return
	}
	cc, err := kafka.Dial("tcp", net.JoinHostPort(ctl.Host, strconv.Itoa(ctl.Port)))
	if err != nil {
		return
	}
	defer cc.Close()
	_ = cc.DeleteTopics(topic)
}

// produce writes msgs to the topic, spread over the partitions by key,
// retrying until the broker acknowledged every one (waiting out a broker
// restart).
func (s *stack) produce(t *testing.T, msgs []kafka.Message) {
	t.Helper()
	s.produceTo(t, s.topic, msgs)
}

func (s *stack) produceTo(t *testing.T, topic string, msgs []kafka.Message) {
	t.Helper()
	w := &kafka.Writer{
		Addr: kafka.TCP(s.brokers...), Topic: topic, Balancer: &kafka.Hash{},
		BatchSize: 1000, BatchTimeout: 20 * time.Millisecond, RequiredAcks: kafka.RequireAll,
		MaxAttempts: 20, WriteBackoffMax: 2 * time.Second,
	}
	defer w.Close()
	deadline := time.Now().Add(3 * time.Minute)
	for start := 0; start < len(msgs); {
		end := min(start+5000, len(msgs))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := w.WriteMessages(ctx, msgs[start:end]...)
		cancel()
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("produce: %v", err)
			}
			t.Logf("produce: %v (retrying)", err)
			time.Sleep(time.Second)
			continue // re-sending may duplicate some messages: the tests count event ids
		}
		start = end
	}
}

// reader is the consumer group of topics, set up as cmd/ingest does: an
// ingest.Group over one topic by Topic, several by GroupTopics.
func (s *stack) reader(t *testing.T, topics ...string) *ingest.Group {
	t.Helper()
	return s.readerDrain(t, 0, topics...)
}

// readerDrain is reader with GroupConfig.DrainTimeout drain (0: its
// default, two thirds of the 10 s rebalance timeout).
func (s *stack) readerDrain(t *testing.T, drain time.Duration, topics ...string) *ingest.Group {
	t.Helper()
	rc := kafka.ReaderConfig{
		Brokers: s.brokers, GroupID: s.group,
		MinBytes: 1, MaxBytes: 8 << 20, MaxWait: 200 * time.Millisecond,
		StartOffset: kafka.FirstOffset, CommitInterval: 0,
		SessionTimeout: 6 * time.Second, HeartbeatInterval: time.Second,
		RebalanceTimeout: 10 * time.Second, JoinGroupBackoff: time.Second,
	}
	if len(topics) == 1 {
		rc.Topic = topics[0]
	} else {
		rc.GroupTopics = topics
	}
	g, err := ingest.NewGroup(ingest.GroupConfig{Reader: rc, DrainTimeout: drain, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (s *stack) config(log *slog.Logger, m *ingest.Metrics) ingest.Config {
	return ingest.Config{
		Topics:  []string{s.topic},
		Table:   s.sopt.Database + "." + schema.TableLanding,
		Limits:  ingest.Limits{Rows: 5000, Wait: 300 * time.Millisecond},
		Backoff: ingest.Backoff{Max: 2 * time.Second},
		Progress: func(ctx context.Context, conn driver.Conn, topic string) (map[int32]int64, error) {
			return schema.Progress(ctx, conn, s.sopt, topic)
		},
		InsertSettings: func(token string) map[string]any { return schema.InsertSettings(s.server, token) },
		InsertTimeout:  20 * time.Second,
		Decoder:        parse.Options{MaxBytes: testMaxBytes},
		Logger:         log,
		Metrics:        m,
	}
}

// running is one in-process pipeline.
type running struct {
	cancel context.CancelFunc
	done   chan error
	r      *ingest.Group
	p      *ingest.Pipeline
}

func (s *stack) start(t *testing.T, cfg ingest.Config) *running {
	t.Helper()
	return s.startOn(t, cfg, s.reader(t, cfg.Topics...), s.conn)
}

// startOn runs a pipeline reading r and writing through conn.
func (s *stack) startOn(t *testing.T, cfg ingest.Config, r *ingest.Group, conn driver.Conn) *running {
	t.Helper()
	p, err := ingest.New(cfg, r, conn)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := &running{cancel: cancel, done: make(chan error, 1), r: r, p: p}
	go func() { run.done <- p.Run(ctx) }()
	return run
}

// stop sends the stop signal and waits for the graceful shutdown.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.r.Close()
		return err
	case <-time.After(2 * time.Minute):
		t.Fatal("pipeline did not stop within 2 minutes")
		return nil
	}
}

// counts is what ClickHouse holds for the test.
type counts struct {
	errors, errorIDs uint64 // rows and distinct event ids in errors
	dead, deadIDs    uint64 // rows and distinct offsets in dead_letter
	landed           uint64 // rows ever inserted into landing (outcomes_1m, which sums, never collapses)
}

func (c counts) String() string {
	return fmt.Sprintf("errors=%d (distinct %d) dead_letter=%d (distinct %d) landed=%d",
		c.errors, c.errorIDs, c.dead, c.deadIDs, c.landed)
}

// counts reads what ClickHouse holds, retrying a few times: after a server
// restart the pool may hand out a dead connection once.
func (s *stack) counts(t *testing.T) (c counts, err error) {
	t.Helper()
	for i := 0; i < 5; i++ {
		if c, err = s.countsOnce(t); err == nil {
			return c, nil
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Logf("counts: %v", err)
	return c, err
}

func (s *stack) countsOnce(t *testing.T) (counts, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var c counts
	db := s.sopt.Database
	if err := s.conn.QueryRow(ctx, "SELECT count(), uniqExact(event_id) FROM "+db+".errors").Scan(&c.errors, &c.errorIDs); err != nil {
		return c, err
	}
	if err := s.conn.QueryRow(ctx, "SELECT count(), uniqExact(kafka_partition, kafka_offset) FROM "+db+".dead_letter").Scan(&c.dead, &c.deadIDs); err != nil {
		return c, err
	}
	if err := s.conn.QueryRow(ctx, "SELECT toUInt64(sum(n)) FROM "+db+".outcomes_1m").Scan(&c.landed); err != nil {
		return c, err
	}
	return c, nil
}

// waitFor polls until ok(counts) or the deadline, which is generous: the
// tests assert what is stored, never how fast.
func (s *stack) waitFor(t *testing.T, d time.Duration, what string, ok func(counts) bool) counts {
	t.Helper()
	deadline := time.Now().Add(d)
	var last counts
	for {
		c, err := s.counts(t)
		if err == nil {
			last = c
			if ok(c) {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s; last: %s (err %v)", d, what, last, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkExact asserts that every event is stored once: wantErrors decoded
// rows, wantDead dead letters, and landing saw exactly that many rows, so
// nothing was inserted twice.
func checkExact(t *testing.T, c counts, wantErrors, wantDead uint64) {
	t.Helper()
	if c.errors != wantErrors || c.errorIDs != wantErrors {
		t.Errorf("errors: got %d rows with %d distinct event ids; want %d", c.errors, c.errorIDs, wantErrors)
	}
	if c.dead != wantDead || c.deadIDs != wantDead {
		t.Errorf("dead_letter: got %d rows at %d distinct offsets; want %d", c.dead, c.deadIDs, wantDead)
	}
	if c.landed != wantErrors+wantDead {
		t.Errorf("landing received %d rows; want %d (a larger number means a batch was written twice)", c.landed, wantErrors+wantDead)
	}
}
