package testenv_test

// These tests prove that the local stack started by scripts/stack is real and
// usable with the clients errtrail uses: kafka-go against the Kafka broker
// (a consumer group included) and clickhouse-go over ClickHouse's native
// protocol. In CI (CI=true or CI=1) a missing server fails them.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/internal/testenv"
)

func suffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func TestKafkaProduceConsume(t *testing.T) {
	brokers := strings.Split(testenv.Kafka(t), ",")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	topic := "errtrail.stacktest." + suffix(t)
	// The default transport, which the writer below uses too: it knows the
	// topic as soon as it is created (testenv.KafkaClient's would not).
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: testenv.KafkaTimeout}
	created, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 2, ReplicationFactor: 1}},
	})
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	if err := created.Errors[topic]; err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if _, err := client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}}); err != nil {
			t.Logf("delete topic %s: %v", topic, err)
		}
	})

	w := &kafka.Writer{
		Addr:         kafka.TCP(brokers...),
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: 10 * time.Millisecond,
	}
	defer w.Close()
	const n = 10
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{
			Key:     []byte(fmt.Sprintf("caller-%d", i%3)),
			Value:   []byte(fmt.Sprintf(`{"v":1,"event_id":"stacktest-%d","observed_at":%d}`, i, time.Now().UnixMilli())),
			Headers: []kafka.Header{{Key: "errtrail-v", Value: []byte("1")}},
		}
	}
	// The new topic's leader may need a moment to be known to the writer.
	for attempt := 0; ; attempt++ {
		err = w.WriteMessages(ctx, msgs...)
		if err == nil {
			break
		}
		if attempt == 20 || ctx.Err() != nil {
			t.Fatalf("produce: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}

	group := "errtrail-stacktest-" + suffix(t)
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:        brokers,
		GroupID:        group,
		Topic:          topic,
		StartOffset:    kafka.FirstOffset,
		MinBytes:       1,
		MaxBytes:       1 << 20,
		MaxWait:        100 * time.Millisecond,
		CommitInterval: 0, // explicit, synchronous commits
	})
	defer r.Close()
	seen := map[string]bool{}
	for len(seen) < n {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("consume (have %d of %d): %v", len(seen), n, err)
		}
		if len(m.Headers) != 1 || m.Headers[0].Key != "errtrail-v" || string(m.Headers[0].Value) != "1" {
			t.Errorf("message at %d/%d lost its header: %+v", m.Partition, m.Offset, m.Headers)
		}
		if seen[string(m.Value)] {
			t.Errorf("message delivered twice: %s", m.Value)
		}
		seen[string(m.Value)] = true
		if err := r.CommitMessages(ctx, m); err != nil {
			t.Fatalf("commit %d/%d: %v", m.Partition, m.Offset, err)
		}
	}

	// The commits are visible to the group coordinator.
	offsets, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1}}})
	if err != nil {
		t.Fatalf("offset fetch: %v", err)
	}
	var committed int64
	for _, p := range offsets.Topics[topic] {
		if p.Error != nil {
			t.Fatalf("offset fetch partition %d: %v", p.Partition, p.Error)
		}
		if p.CommittedOffset > 0 {
			committed += p.CommittedOffset
		}
	}
	if committed != n {
		t.Errorf("committed offsets add up to %d, want %d", committed, n)
	}
}

func TestStackTopicExists(t *testing.T) {
	brokers := strings.Split(testenv.Kafka(t), ",")
	topic := testenv.Lookup("ERRTRAIL_KAFKA_TOPIC", "errtrail.replies")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := testenv.KafkaClient(t, brokers)
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatalf("metadata: %v", err)
	}
	if len(md.Topics) != 1 || md.Topics[0].Error != nil {
		t.Fatalf("topic %s: %+v", topic, md.Topics)
	}
	if got := len(md.Topics[0].Partitions); got != 4 {
		t.Errorf("topic %s has %d partitions, want 4", topic, got)
	}
}

func TestClickHouseNativeBatch(t *testing.T) {
	addr := testenv.ClickHouse(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:        []string{addr},
		Protocol:    clickhouse.Native,
		Auth:        clickhouse.Auth{Database: "default", Username: "default"},
		Compression: &clickhouse.Compression{Method: clickhouse.CompressionLZ4},
		DialTimeout: testenv.CHDialTimeout,
	})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.Ping(ctx); err != nil {
		t.Fatalf("ping %s: %v", addr, err)
	}
	v, err := conn.ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	t.Logf("%s at %s", v, addr)

	table := "stacktest_" + suffix(t)
	if err := conn.Exec(ctx, `CREATE TABLE `+table+` (
		id UInt64,
		agent String,
		status UInt16,
		at DateTime
	) ENGINE = MergeTree() ORDER BY id`); err != nil {
		t.Fatalf("create table: %v", err)
	}
	t.Cleanup(func() {
		if err := conn.Exec(context.Background(), "DROP TABLE IF EXISTS "+table); err != nil {
			t.Logf("drop %s: %v", table, err)
		}
	})

	const rows = 5000
	// ClickHouse 18.16 needs the column list spelled out.
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+table+" (id, agent, status, at)")
	if err != nil {
		t.Fatalf("prepare batch: %v", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	for i := 0; i < rows; i++ {
		if err := batch.Append(uint64(i), fmt.Sprintf("agent-%d", i%7), uint16(400+i%100), now); err != nil {
			t.Fatalf("append row %d: %v", i, err)
		}
	}
	if err := batch.Send(); err != nil {
		t.Fatalf("send batch: %v", err)
	}

	var count, agents uint64
	if err := conn.QueryRow(ctx, "SELECT count(), uniqExact(agent) FROM "+table).Scan(&count, &agents); err != nil {
		t.Fatalf("count: %v", err)
	}
	if count != rows || agents != 7 {
		t.Errorf("count=%d agents=%d, want %d and 7", count, agents, rows)
	}
}

func TestPrometheusAndAlertmanagerReady(t *testing.T) {
	for name, addr := range map[string]string{
		"Prometheus":   testenv.Prometheus(t),
		"Alertmanager": testenv.Alertmanager(t),
	} {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s /-/ready: %s", name, resp.Status)
		}
	}
}

// TestLookupReadsStackEnv checks that .stack/env is found from a package
// directory below the module root and that the environment wins over it.
func TestLookupReadsStackEnv(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".stack"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := "export ERRTRAIL_TESTENV_PROBE=127.0.0.1:1234\nERRTRAIL_TESTENV_QUOTED='a:1'\n"
	if err := os.WriteFile(filepath.Join(root, ".stack", "env"), []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "internal", "x")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)

	if got := testenv.Lookup("ERRTRAIL_TESTENV_PROBE", "def"); got != "127.0.0.1:1234" {
		t.Errorf("from .stack/env: got %q", got)
	}
	if got := testenv.Lookup("ERRTRAIL_TESTENV_QUOTED", "def"); got != "a:1" {
		t.Errorf("quoted: got %q", got)
	}
	if got := testenv.Lookup("ERRTRAIL_TESTENV_MISSING", "def"); got != "def" {
		t.Errorf("default: got %q", got)
	}
	t.Setenv("ERRTRAIL_TESTENV_PROBE", "env:1")
	if got := testenv.Lookup("ERRTRAIL_TESTENV_PROBE", "def"); got != "env:1" {
		t.Errorf("environment should win: got %q", got)
	}
}

// TestStackRestartClickHouse checks the fault-test hooks: a paused ClickHouse
// stops answering, and a restarted one answers again with its data intact.
// Like the fault tests it breaks a ClickHouse of its own (testenv.Own),
// started by scripts/stack as the shared one is.
func TestStackRestartClickHouse(t *testing.T) {
	own := testenv.Own(t, "clickhouse")
	addr := own.ClickHouse(t)
	// open connects with a short read timeout: the paused server must not
	// answer within it (nor the handshake within the dial timeout, which
	// bounds it: short too, then). Reads that only need an answer (the
	// setup, the count after the restart) take longer ones: under CI's load
	// (the race run beside the cluster's four servers) a freshly started
	// 18.16 can take more than 2 s over its first query.
	open := func(read time.Duration) clickhouse.Conn {
		dial := testenv.CHDialTimeout
		if read < dial {
			dial = read
		}
		conn, err := clickhouse.Open(&clickhouse.Options{
			Addr:        []string{addr},
			DialTimeout: dial,
			ReadTimeout: read,
		})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	ctx := context.Background()
	conn := open(30 * time.Second)
	table := "stacktest_restart_" + suffix(t)
	if err := conn.Exec(ctx, "CREATE TABLE "+table+" (n UInt8) ENGINE = MergeTree() ORDER BY n"); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = open(30*time.Second).Exec(context.Background(), "DROP TABLE IF EXISTS "+table) })
	// With 18.16, Exec("INSERT ... VALUES ...") hangs until the read timeout:
	// rows go in through a batch (or INSERT ... SELECT).
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+table+" (n)")
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	for _, n := range []uint8{1, 2, 3} {
		if err := batch.Append(n); err != nil {
			t.Fatalf("append: %v", err)
		}
	}
	if err := batch.Send(); err != nil {
		t.Fatalf("insert: %v", err)
	}

	own.Stack(t, "pause-clickhouse")
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			own.Stack(t, "resume-clickhouse")
		}
	})
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	err = open(2 * time.Second).Ping(pctx)
	cancel()
	if err == nil {
		t.Error("a paused ClickHouse answered a ping")
	}
	// The other tests' ClickHouse is another server: it still answers.
	shared, err := clickhouse.Open(&clickhouse.Options{Addr: []string{testenv.ClickHouse(t)}, DialTimeout: testenv.CHDialTimeout})
	if err != nil {
		t.Fatalf("open the shared ClickHouse: %v", err)
	}
	pctx, cancel = context.WithTimeout(ctx, 30*time.Second)
	err = shared.Ping(pctx)
	cancel()
	shared.Close()
	if err != nil {
		t.Errorf("the shared ClickHouse does not answer while the own one is paused: %v", err)
	}
	own.Stack(t, "resume-clickhouse")
	resumed = true

	own.Stack(t, "restart-clickhouse")
	// scripts/stack returns once clickhouse-client's SELECT 1 is answered;
	// the count is tried again for a bounded while, so a slow first answer
	// under load is not taken for lost data (a wrong count fails at once).
	var n uint64
	deadline := time.Now().Add(60 * time.Second)
	for attempt := 1; ; attempt++ {
		qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err = open(20*time.Second).QueryRow(qctx, "SELECT count() FROM "+table).Scan(&n)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("count after restart, %d attempts: %v", attempt, err)
		}
		t.Logf("count after restart, attempt %d: %v", attempt, err)
		time.Sleep(time.Second)
	}
	if n != 3 {
		t.Errorf("after restart %s has %d rows, want 3", table, n)
	}
}
