package clustertest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/dashboards"
	"github.com/errtrail/errtrail/internal/stackload"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/loadgen"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/schema"
)

var (
	buildOnce sync.Once
	ingestBin string
	buildErr  error
)

// ingestBinary builds cmd/ingest once for the package's tests.
func ingestBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "errtrail-clustertest-")
		if err != nil {
			buildErr = err
			return
		}
		ingestBin = filepath.Join(dir, "ingest")
		cmd := exec.Command("go", "build", "-o", ingestBin, "./cmd/ingest")
		cmd.Dir = testenv.ModuleRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/ingest: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return ingestBin
}

// member is one `ingest run` process of a test.
type member struct {
	cmd     *exec.Cmd
	metrics string
	done    chan error
}

// startIngest runs `ingest run` against node with the cluster's schema in
// db, consuming topic in group; extra flags follow.
func startIngest(t *testing.T, node string, cl testenv.ClickHouseCluster, db, topic, group string, extra ...string) *member {
	t.Helper()
	metrics := testenv.FreeAddr(t)
	args := append([]string{"run", "--kafka.brokers", testenv.Kafka(t), "--kafka.topic", topic, "--kafka.group", group,
		"--clickhouse.addr", node, "--clickhouse.database", db, "--clickhouse.cluster", cl.Name,
		"--http.listen-address", metrics, "--batch.wait", "200ms", "--insert.backoff-max", "1s",
		"--log.level", "info", "--gc.percent", "100", "--memory.limit-mib", "0"}, extra...)
	cmd := exec.Command(ingestBinary(t), args...)
	logf, err := os.Create(filepath.Join(t.TempDir(), "ingest.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := &member{cmd: cmd, metrics: metrics, done: make(chan error, 1)}
	go func() { m.done <- cmd.Wait(); logf.Close() }()
	t.Cleanup(func() {
		m.stop()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("ingest log (%s):\n%s", strings.Join(args, " "), tail(string(b), 60))
		}
	})
	return m
}

func (m *member) stop() {
	if m.cmd.ProcessState != nil {
		return
	}
	_ = m.cmd.Process.Signal(os.Interrupt)
	select {
	case <-m.done:
	case <-time.After(30 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}

func (m *member) kill() {
	_ = m.cmd.Process.Kill()
	<-m.done
}

// ready waits for the member's /readyz to answer 200.
func (m *member) ready(t *testing.T, within time.Duration) {
	t.Helper()
	waitFor(t, within, func() (bool, string) {
		resp, err := http.Get("http://" + m.metrics + "/readyz")
		if err != nil {
			return false, fmt.Sprintf("ingest not ready (%v)", err)
		}
		resp.Body.Close()
		return resp.StatusCode == 200, fmt.Sprintf("ingest not ready (/readyz: %d)", resp.StatusCode)
	})
}

func tail(s string, lines int) string {
	ls := strings.Split(s, "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// topic makes a fresh topic with partitions partitions on the stack's Kafka.
func topic(t *testing.T, prefix string, partitions int) string {
	t.Helper()
	return topicNamed(t, fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()), partitions)
}

func topicNamed(t *testing.T, name string, partitions int) string {
	t.Helper()
	brokers := strings.Split(testenv.Kafka(t), ",")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := loadgen.EnsureTopic(ctx, brokers, name, partitions); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		loadgen.DropTopics(ctx, brokers, "", []string{name})
	})
	return name
}

// spreadTopic makes a topic whose partitions are spread over both shards of
// layout B: rows are sharded by cityHash64(kafka_topic, kafka_partition)
// (schema's kafkaShard), so a name is drawn until that is so.
func spreadTopic(t *testing.T, conn driver.Conn, prefix string, partitions int) string {
	t.Helper()
	for try := 0; try < 50; try++ {
		name := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano())
		var shards uint64
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := conn.QueryRow(ctx, fmt.Sprintf("SELECT uniqExact(cityHash64(%s, toInt32(number)) %% 2) FROM numbers(%d)", quote(name), partitions)).Scan(&shards)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if shards == 2 {
			return topicNamed(t, name, partitions)
		}
	}
	t.Fatal("no topic name spreads its partitions over both shards")
	return ""
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

// event is a quota rejection of agent observed at at (a JSON-RPC error with
// the limiter's ErrorInfo), with its own event id.
func event(id, agent string, at time.Time) []byte {
	return []byte(fmt.Sprintf(`{"v":1,"event_id":%q,"observed_at":%d,"source":{"kind":"agent","id":"a1"},"agent":%q,"caller":"c1","reply":{"binding":"jsonrpc","http_status":429,"headers":[["Content-Type","application/json"]],"body_json":{"jsonrpc":"2.0","id":"r1","error":{"code":-32603,"message":"over the limit","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"agents.example"}]}}}}`,
		id, at.UnixMilli(), agent))
}

// produce writes the events to topic, spread over its partitions by key.
func produce(t *testing.T, topic string, evs [][]byte) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(strings.Split(testenv.Kafka(t), ",")...), Topic: topic, Balancer: &kafka.Hash{},
		BatchTimeout: 5 * time.Millisecond, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	msgs := make([]kafka.Message, len(evs))
	for i, e := range evs {
		msgs[i] = kafka.Message{Key: []byte(fmt.Sprint(i)), Value: e}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

func count(t *testing.T, conn driver.Conn, q string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n uint64
	if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// waitFor asks probe every 300 ms until it answers done and fails the
// test with what probe last saw once within has passed. within is a hang
// guard on an outcome, not a latency bound.
func waitFor(t *testing.T, within time.Duration, probe func() (done bool, saw string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		done, saw := probe()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s; still so after %v", saw, within)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// waitCount waits until q returns want, failing after within.
func waitCount(t *testing.T, conn driver.Conn, q string, want uint64, within time.Duration) {
	t.Helper()
	waitFor(t, within, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var n uint64
		err := conn.QueryRow(ctx, q).Scan(&n)
		return err == nil && n == want, fmt.Sprintf("%s = %d (%v); want %d", q, n, err, want)
	})
}

func dropDatabase(t *testing.T, conn driver.Conn, cl testenv.ClickHouseCluster, db string) {
	t.Cleanup(func() {
		if os.Getenv("ERRTRAIL_KEEP_TEST_DATA") != "" {
			t.Logf("kept database %s", db)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" ON CLUSTER "+cl.Name); err != nil {
			t.Logf("drop %s: %v", db, err)
		}
	})
}

func uniq() string { return fmt.Sprintf("%d", time.Now().UnixNano()%1e10) }

// counts is what one node's local tables hold: the rows of errors (as
// stored and FINAL), the events counted in each rollup, and the
// error_lookup entries by event id.
type counts struct{ rows, final, errors1m, outcomes1m, callers1m, lookup uint64 }

func (c counts) String() string {
	return fmt.Sprintf("errors %d (final %d), errors_1m_v2 %d, outcomes_1m %d, callers_1m %d, error_lookup by event %d",
		c.rows, c.final, c.errors1m, c.outcomes1m, c.callers1m, c.lookup)
}

// consistent: every event stored once (no copy before a merge), and every
// rollup and the lookup count each event once.
func (c counts) consistent() bool {
	return c.rows > 0 && c.rows == c.final && c.rows == c.errors1m && c.rows == c.outcomes1m && c.rows == c.callers1m && c.rows == c.lookup
}

// sums reads one node's counts.
func sums(t *testing.T, conn driver.Conn, db string) counts {
	t.Helper()
	c, err := readSums(conn, db)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readSums(conn driver.Conn, db string) (counts, error) {
	var c counts
	for _, q := range []struct {
		dst *uint64
		sql string
	}{
		{&c.rows, "SELECT count() FROM " + db + ".errors_local"},
		{&c.final, "SELECT count() FROM " + db + ".errors_local FINAL"},
		{&c.errors1m, "SELECT sum(n) FROM " + db + ".errors_1m_v2_local"},
		{&c.outcomes1m, "SELECT sum(n) FROM " + db + ".outcomes_1m_local"},
		{&c.callers1m, "SELECT sum(n) FROM " + db + ".callers_1m_local"},
		{&c.lookup, "SELECT count() FROM " + db + ".error_lookup_local WHERE id_kind = 'event_id'"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := conn.QueryRow(ctx, q.sql).Scan(q.dst)
		cancel()
		if err != nil {
			return c, fmt.Errorf("%s: %w", q.sql, err)
		}
	}
	return c, nil
}

// waitWritten waits until every table of one node counts n events. An
// insert into landing writes errors through the first of landing's views
// and the rollups through later ones: its errors rows can be visible while
// its rollups are still being written, and a replica synced in that moment
// has not been told of them yet (seen: errors 3 and the rollups 2 on the
// second replica). It fails after within with the node's counts.
func waitWritten(t *testing.T, conn driver.Conn, db string, n uint64, within time.Duration) {
	t.Helper()
	waitFor(t, within, func() (bool, string) {
		got, err := readSums(conn, db)
		return err == nil && got == want(n), fmt.Sprintf("the writing node's tables: %v (%v); want %v", got, err, want(n))
	})
}

// waitConsistent waits until one node's tables count each of its events
// once (counts.consistent). The count of errors can reach a total while
// the rollups of the last insert are still being written (see
// waitWritten); a copy stored twice never gets there, as the rollups count
// it twice even after a merge has removed it from errors.
func waitConsistent(t *testing.T, conn driver.Conn, db string, what string, within time.Duration) counts {
	t.Helper()
	var got counts
	waitFor(t, within, func() (bool, string) {
		var err error
		got, err = readSums(conn, db)
		return err == nil && got.consistent(), fmt.Sprintf("%s: %v (%v); every count must equal the rows, and none be 0", what, got, err)
	})
	return got
}

// want is the counts of n events, each stored and counted once.
func want(n uint64) counts { return counts{n, n, n, n, n, n} }

func syncReplicas(t *testing.T, conn driver.Conn, db string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, tb := range []string{"errors_local", "errors_1m_v2_local", "outcomes_1m_local", "callers_1m_local", "error_lookup_local", "ingest_progress_local"} {
		if err := conn.Exec(ctx, "SYSTEM SYNC REPLICA "+db+"."+tb); err != nil {
			t.Fatalf("SYSTEM SYNC REPLICA %s: %v", tb, err)
		}
	}
}

// TestClusterReplicasAndRollups, layout A (1 shard × 2 replicas): three
// one-event batches in one minute all reach the rollups (18.16's replicated
// tables dropped two of them as duplicate blocks), and a replica killed
// while ingest writes catches up once it restarts: on both replicas every
// event is stored once and every rollup counts each event once.
func TestClusterReplicasAndRollups(t *testing.T) {
	cl := testenv.ClusterToStop(t, "A")
	n1, n2 := stackload.Open(t, cl.Nodes[0]), stackload.Open(t, cl.Nodes[1])
	db := "errtrail_cluster_a_" + uniq()
	dropDatabase(t, n1, cl, db)
	tp := topic(t, "errtrail.cluster-a.", 2)
	at := time.Now().Truncate(time.Minute).Add(5 * time.Second)
	if time.Until(at.Add(time.Minute)) < 20*time.Second {
		at = at.Add(-time.Minute) // keep the three in one minute even near its end
	}
	var first [][]byte
	for i := 0; i < 3; i++ {
		first = append(first, event(fmt.Sprintf("same-minute-%d", i), "research-agent", at))
	}
	produce(t, tp, first)
	group := "errtrail-cluster-a-" + uniq()
	ing := startIngest(t, cl.Nodes[0], cl, db, tp, group, "--batch.rows", "1")
	ing.ready(t, 90*time.Second)
	waitWritten(t, n1, db, 3, 60*time.Second)
	syncReplicas(t, n2, db)
	for i, c := range []driver.Conn{n1, n2} {
		if got := sums(t, c, db); got != want(3) {
			t.Errorf("replica %d after three one-event batches in one minute: %v; want %v", i+1, got, want(3))
		}
	}

	// Kill the second replica, write while it is down (an ingester with
	// its usual batches now: one-event batches are for the minute above),
	// bring it back.
	ing.stop()
	ing = startIngest(t, cl.Nodes[0], cl, db, tp, group)
	ing.ready(t, 90*time.Second)
	cl.Node(t, "kill-node", 1)
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			cl.Node(t, "start-node", 1)
		}
	})
	var more [][]byte
	for i := 0; i < 300; i++ {
		more = append(more, event(fmt.Sprintf("while-down-%d", i), "research-agent", time.Now()))
	}
	produce(t, tp, more)
	waitWritten(t, n1, db, 303, 3*time.Minute)
	cl.Node(t, "start-node", 1)
	restarted = true
	n2 = stackload.Open(t, cl.Nodes[1])
	syncReplicas(t, n2, db)
	for i, c := range []driver.Conn{n1, n2} {
		if got := sums(t, c, db); got != want(303) {
			t.Errorf("replica %d after the other was killed and restarted: %v; want %v", i+1, got, want(303))
		}
	}
}

// TestClusterShardDown, layout B (2 shards × 1 replica): with one shard's
// node down, the partitions of the healthy shard go on (stored and
// committed to their end) while those of the down shard commit nothing
// (their rows are parked, an insert waits for every shard), ingest starts
// again and migrates while the node is down, and once it is back every
// event is stored exactly once — no copy of the rows the healthy shard took
// — with rollups equal to the rows. A lookup by event id through either
// node finds a row on either shard.
func TestClusterShardDown(t *testing.T) {
	cl := testenv.ClusterToStop(t, "B")
	n3, n4 := stackload.Open(t, cl.Nodes[0]), stackload.Open(t, cl.Nodes[1])
	db := "errtrail_cluster_b_" + uniq()
	dropDatabase(t, n3, cl, db)
	tp := spreadTopic(t, n3, "errtrail.cluster-b.", 4)
	group := "errtrail-cluster-b-" + uniq()
	var evs [][]byte
	for i := 0; i < 40; i++ {
		evs = append(evs, event(fmt.Sprintf("before-%d", i), "research-agent", time.Now()))
	}
	produce(t, tp, evs)
	ing := startIngest(t, cl.Nodes[0], cl, db, tp, group)
	ing.ready(t, 90*time.Second)
	total := "SELECT (SELECT count() FROM " + db + ".errors_local) + (SELECT count() FROM remote('" + cl.Nodes[1] + "', " + db + ".errors_local))"
	waitCount(t, n3, total, 40, 60*time.Second)
	if a, b := count(t, n3, "SELECT count() FROM "+db+".errors_local"), count(t, n4, "SELECT count() FROM "+db+".errors_local"); a == 0 || b == 0 {
		t.Fatalf("rows per shard %d and %d: the topic's partitions should spread over both shards", a, b)
	}
	committed := waitCommitted(t, tp, group, 40)
	onShard1 := partitionsIn(t, n3, db)

	cl.Node(t, "stop-node", 1)
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			cl.Node(t, "start-node", 1)
		}
	})
	evs = evs[:0]
	for i := 0; i < 100; i++ {
		evs = append(evs, event(fmt.Sprintf("while-down-%d", i), "research-agent", time.Now()))
	}
	produce(t, tp, evs)

	// Shard 1's partitions flow on (their rows are stored and committed,
	// the rows of shard 2 are parked in memory and its partitions paused);
	// shard 2's partitions commit nothing.
	ends := endOffsets(t, tp)
	var now map[int]int64
	var healthyNew int64
	waitFor(t, 90*time.Second, func() (bool, string) {
		now = groupOffsets(t, tp, group)
		caught := true
		healthyNew = 0
		for p := range onShard1 {
			caught = caught && now[p] == ends[p]
			healthyNew += ends[p] - committed[p]
		}
		return caught, fmt.Sprintf("with shard 2 down, shard 1's partitions %v committed %v; want their end offsets %v (the healthy shard must go on)", onShard1, now, ends)
	})
	for p := range ends {
		if !onShard1[p] && now[p] != committed[p] {
			t.Errorf("with shard 2 down its partition %d committed %d (was %d): rows not on their shard were committed", p, now[p], committed[p])
		}
	}
	if healthyNew == 0 {
		t.Fatal("none of the while-down events went to shard 1's partitions: the test shows nothing")
	}
	if n := count(t, n3, "SELECT count() FROM "+db+".errors_local WHERE startsWith(event_id, 'while-down-')"); n != uint64(healthyNew) {
		t.Errorf("shard 1 holds %d of the while-down events while shard 2 is down; want the %d of its partitions", n, healthyNew)
	}
	if m := metricValue(t, ing.metrics, "errtrail_ingest_parked_rows"); m <= 0 {
		t.Errorf("parked_rows = %v while shard 2 is down; want the rows waiting for it", m)
	}

	// A restart while the node is down: migrate and start anyway.
	ing.kill()
	ing = startIngest(t, cl.Nodes[0], cl, db, tp, group)
	ing.ready(t, 60*time.Second)

	cl.Node(t, "start-node", 1)
	restarted = true
	n4 = stackload.Open(t, cl.Nodes[1])
	// Events keep arriving while the parked rows wait for their retry (the
	// ingester started while node4 was down parked its rows): the retry
	// must not wait for a quiet moment.
	for w := 0; w < 12; w++ {
		var more [][]byte
		for i := 0; i < 5; i++ {
			more = append(more, event(fmt.Sprintf("after-%d-%d", w, i), "research-agent", time.Now()))
		}
		produce(t, tp, more)
		time.Sleep(500 * time.Millisecond)
	}
	waitCount(t, n3, total, 200, 120*time.Second)
	time.Sleep(2 * time.Second) // a late duplicate would show now
	var got [2]counts
	for i, c := range []driver.Conn{n3, n4} {
		got[i] = waitConsistent(t, c, db, fmt.Sprintf("shard %d after shard 2 came back", i+1), time.Minute)
	}
	var rows, rollup uint64
	for _, c := range []driver.Conn{n3, n4} {
		rows += count(t, c, "SELECT count() FROM "+db+".errors_local")
		rollup += count(t, c, "SELECT sum(n) FROM "+db+".errors_1m_v2_local")
	}
	if rows != 200 || rollup != 200 {
		t.Errorf("after shard 2 came back: %d rows stored and %d counted in errors_1m_v2; want 200 each (shard 1: %v; shard 2: %v)", rows, rollup, got[0], got[1])
	}

	// A lookup by event id through either node finds rows on either shard.
	for i, c := range []driver.Conn{n3, n4} {
		var id string
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.QueryRow(ctx, "SELECT event_id FROM "+db+".errors_local LIMIT 1").Scan(&id)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for j, via := range []driver.Conn{n3, n4} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			found, err := schema.Lookup(ctx, via, schema.Options{Database: db, Cluster: cl.Name}, id)
			cancel()
			if err != nil || len(found) != 1 || found[0].EventID != id {
				t.Errorf("lookup of %s (stored on shard %d) through node %d: %d rows, %v; want 1", id, i+1, j+1, len(found), err)
			}
		}
	}
}

// partitionsIn returns the Kafka partitions whose rows conn's shard holds.
func partitionsIn(t *testing.T, conn driver.Conn, db string) map[int]bool {
	t.Helper()
	return partitionsOf(t, conn, db+".errors_local")
}

// endOffsets returns the end offset of each of topic's 4 partitions.
func endOffsets(t *testing.T, topic string) map[int]int64 {
	t.Helper()
	c := testenv.KafkaClient(t, strings.Split(testenv.Kafka(t), ","))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var req []kafka.OffsetRequest
	for p := 0; p < 4; p++ {
		req = append(req, kafka.LastOffsetOf(p))
	}
	resp, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: req}})
	if err != nil {
		t.Fatalf("list offsets: %v", err)
	}
	out := map[int]int64{}
	for _, p := range resp.Topics[topic] {
		if p.Error != nil {
			t.Fatalf("list offsets of partition %d: %v", p.Partition, p.Error)
		}
		out[p.Partition] = p.LastOffset
	}
	return out
}

// metricValue reads one unlabelled metric from an ingest process's
// /metrics; -1 when it is absent.
func metricValue(t *testing.T, addr, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// groupOffsets returns the group's committed offset per partition of topic.
func groupOffsets(t *testing.T, topic, group string) map[int]int64 {
	t.Helper()
	c := testenv.KafkaClient(t, strings.Split(testenv.Kafka(t), ","))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := c.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1, 2, 3}}})
	if err != nil {
		t.Fatalf("offset fetch: %v", err)
	}
	out := map[int]int64{}
	for _, p := range resp.Topics[topic] {
		out[p.Partition] = p.CommittedOffset
	}
	return out
}

// waitCommitted waits until the group's committed offsets cover n
// messages of topic and returns them.
func waitCommitted(t *testing.T, topic, group string, n int64) map[int]int64 {
	t.Helper()
	var got map[int]int64
	waitFor(t, time.Minute, func() (bool, string) {
		got = groupOffsets(t, topic, group)
		var sum int64
		for _, o := range got {
			sum += max(o, 0)
		}
		return sum == n, fmt.Sprintf("the group committed %v (%d messages); want %d", got, sum, n)
	})
	return got
}

func sameOffsets(a, b map[int]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestClusterQueries, layout B: the read side on a cluster whose rows are on
// both shards. Every query of every dashboard runs through a node (with
// the plain and the quoted values); the support lookup's single statement
// (schema.LookupQuery, the dashboard's query) finds a row stored on either
// shard, once; and the alerter's Gather and Evaluate run and count every
// reply of the agent, from both shards.
func TestClusterQueries(t *testing.T) {
	cl := testenv.Cluster(t, "B")
	n3, n4 := stackload.Open(t, cl.Nodes[0]), stackload.Open(t, cl.Nodes[1])
	db := "errtrail_cluster_q_" + uniq()
	dropDatabase(t, n3, cl, db)
	tp := spreadTopic(t, n3, "errtrail.cluster-q.", 4)
	var evs [][]byte
	for i := 0; i < 60; i++ {
		evs = append(evs, event(fmt.Sprintf("q-%d", i), "agent-a", time.Now().Add(-time.Duration(i)*time.Second)))
	}
	produce(t, tp, evs)
	ing := startIngest(t, cl.Nodes[0], cl, db, tp, "errtrail-cluster-q-"+uniq())
	ing.ready(t, 90*time.Second)
	total := "SELECT (SELECT count() FROM " + db + ".errors_local) + (SELECT count() FROM remote('" + cl.Nodes[1] + "', " + db + ".errors_local))"
	waitCount(t, n3, total, 60, 60*time.Second)
	ing.stop()

	qs, err := dashboards.ExpandedQueries(dashboards.TestValues(db))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, q := range qs {
		rows, err := n3.Query(ctx, q.SQL)
		if err != nil {
			t.Errorf("%s / %s / %s on the cluster: %v\n%s", q.Dashboard, q.Where, q.Values, err, q.SQL)
			continue
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s / %s / %s on the cluster: %v", q.Dashboard, q.Where, q.Values, err)
		}
		rows.Close()
	}

	lq := schema.LookupQuery(schema.Options{Database: db})
	for i, c := range []driver.Conn{n3, n4} {
		var id string
		if err := c.QueryRow(ctx, "SELECT event_id FROM "+db+".errors_local LIMIT 1").Scan(&id); err != nil {
			t.Fatal(err)
		}
		rows, err := n3.Query(ctx, lq, id, id, id)
		if err != nil {
			t.Fatalf("LookupQuery on the cluster: %v", err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n != 1 {
			t.Errorf("LookupQuery of %s (on shard %d) through node 1: %d rows; want 1", id, i+1, n)
		}
	}

	// The support story of an event on each shard, through node 1: found,
	// with its attempts and context (the alerter's verdicts among them).
	f := &lookup.Finder{Conn: n3, Database: db, Recompute: &alerter.Recomputer{Conn: n3, Database: db}}
	for i, c := range []driver.Conn{n3, n4} {
		var id string
		if err := c.QueryRow(ctx, "SELECT event_id FROM "+db+".errors_local LIMIT 1").Scan(&id); err != nil {
			t.Fatal(err)
		}
		st, err := f.Story(ctx, id, lookup.FindOptions{})
		if err != nil {
			t.Errorf("story of %s (on shard %d) on the cluster: %v", id, i+1, err)
			continue
		}
		if st.Record.EventID != id || st.Context.VerdictError != "" {
			t.Errorf("story of %s (on shard %d): record %q, verdicts error %q", id, i+1, st.Record.EventID, st.Context.VerdictError)
		}
	}

	cfg := alerter.DefaultConfig()
	now := time.Now()
	in, err := (&alerter.Reader{Conn: n3, Database: db}).Gather(ctx, &cfg, now)
	if err != nil {
		t.Fatalf("alerter Gather on the cluster: %v", err)
	}
	v := alerter.Evaluate(&cfg, in, nil)
	var a *alerter.AgentVerdict
	for i := range v.Agents {
		if v.Agents[i].Agent == "agent-a" {
			a = &v.Agents[i]
		}
	}
	if a == nil {
		t.Fatalf("the alerter found no verdict for agent-a on the cluster: %+v", v.Agents)
	}
	sp := cfg.SpanAt(now)
	secs := sp.End - sp.WindowStart
	inWindow := count(t, n3, fmt.Sprintf("SELECT count() FROM %s.errors WHERE agent = 'agent-a' AND observed_at > toDateTime(%d) AND observed_at <= toDateTime(%d)",
		db, sp.WindowStart, sp.End))
	if got := a.QuotaPerSec * float64(secs); inWindow == 0 || got < float64(inWindow)-0.5 || got > float64(inWindow)+0.5 {
		t.Errorf("agent-a: %.1f quota replies in the window on the cluster (%.3f/s over %d s); want the %d both shards hold",
			got, a.QuotaPerSec, secs, inWindow)
	}
}

// TestClusterMemberKilled, layout B: two ingest members share the group;
// one is killed (SIGKILL) while events arrive. The other takes its
// partitions over, and at the end every event is stored exactly once on its
// shard — what the killed member wrote and did not commit is recognised by
// the progress rows and not written again — with rollups equal to the rows.
//
// The second member joins while the first may hold batches in flight: the
// rebalance must not let both store a moved partition's messages (errors
// collapses such a copy, the Summing rollups add it). ingest.Group holds
// the partitions back until the first member's batches are committed;
// before it, this test counted +10 to +26 of about 300 events twice in the
// rollups in two runs of three.
func TestClusterMemberKilled(t *testing.T) {
	cl := testenv.Cluster(t, "B")
	n3, n4 := stackload.Open(t, cl.Nodes[0]), stackload.Open(t, cl.Nodes[1])
	db := "errtrail_cluster_m_" + uniq()
	dropDatabase(t, n3, cl, db)
	tp := spreadTopic(t, n3, "errtrail.cluster-m.", 4)
	group := "errtrail-cluster-m-" + uniq()
	flags := []string{"--kafka.session-timeout", "6s", "--batch.rows", "20"}
	a := startIngest(t, cl.Nodes[0], cl, db, tp, group, flags...)
	a.ready(t, 90*time.Second)
	b := startIngest(t, cl.Nodes[1], cl, db, tp, group, flags...)
	b.ready(t, 90*time.Second)
	const waves, per = 8, 50
	for w := 0; w < waves; w++ {
		var evs [][]byte
		for i := 0; i < per; i++ {
			evs = append(evs, event(fmt.Sprintf("w%d-%d", w, i), "research-agent", time.Now()))
		}
		produce(t, tp, evs)
		if w == waves/2 {
			a.kill()
		}
		time.Sleep(300 * time.Millisecond)
	}
	total := "SELECT (SELECT count() FROM " + db + ".errors_local FINAL) + (SELECT count() FROM remote('" + cl.Nodes[1] + "', " + db + ".errors_local))"
	waitCount(t, n3, total, waves*per, 3*time.Minute)
	time.Sleep(2 * time.Second) // a late copy would show now
	for i, c := range []driver.Conn{n3, n4} {
		waitConsistent(t, c, db, fmt.Sprintf("shard %d after a member was killed", i+1), time.Minute)
	}
}

// TestClusterNodeAddedLater, layout A: a replica that joins after the
// schema was migrated (here: its database dropped on that node alone) gets
// every table and view from `ingest migrate` pointed at it, although every
// migration is recorded as applied, and then holds the rows the other
// replica stored before it joined. Migrating it again changes nothing.
func TestClusterNodeAddedLater(t *testing.T) {
	cl := testenv.Cluster(t, "A")
	n1 := stackload.Open(t, cl.Nodes[0])
	db := "errtrail_cluster_n_" + uniq()
	dropDatabase(t, n1, cl, db)
	tp := topic(t, "errtrail.cluster-n.", 2)
	var evs [][]byte
	for i := 0; i < 50; i++ {
		evs = append(evs, event(fmt.Sprintf("before-join-%d", i), "research-agent", time.Now()))
	}
	produce(t, tp, evs)
	ing := startIngest(t, cl.Nodes[0], cl, db, tp, "errtrail-cluster-n-"+uniq())
	ing.ready(t, 90*time.Second)
	waitCount(t, n1, "SELECT count() FROM "+db+".errors_local", 50, 60*time.Second)
	ing.stop()

	n2 := stackload.Open(t, cl.Nodes[1])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := n2.Exec(ctx, "DROP DATABASE "+db); err != nil { // this node only: a new replica
		t.Fatal(err)
	}
	tables := "SELECT count() FROM system.tables WHERE database = '" + db + "'"
	if n := count(t, n2, tables); n != 0 {
		t.Fatalf("the new replica still has %d tables", n)
	}
	runMigrate := func(node string) string {
		t.Helper()
		out, err := exec.Command(ingestBinary(t), "migrate", "--clickhouse.addr", node, "--clickhouse.database", db,
			"--clickhouse.cluster", cl.Name).CombinedOutput()
		if err != nil {
			t.Fatalf("ingest migrate against %s: %v\n%s", node, err, out)
		}
		return string(out)
	}
	out := runMigrate(cl.Nodes[1])
	// Every recorded migration (all but version 0, which Migrate runs each
	// time), whatever their number.
	v, err := schema.ParseServerVersion("18.16.1")
	if err != nil {
		t.Fatal(err)
	}
	var versions []string
	for _, m := range schema.Render(v, schema.Options{Database: db, Cluster: cl.Name}) {
		if m.Version > 0 {
			versions = append(versions, strconv.Itoa(m.Version))
		}
	}
	if wantRepaired := `repaired="[` + strings.Join(versions, " ") + `]"`; len(versions) < 7 ||
		!strings.Contains(out, "applied=[]") || !strings.Contains(out, wantRepaired) {
		t.Errorf("ingest migrate against the new replica: want every migration repaired (recreated, not recorded again: %s):\n%s", wantRepaired, out)
	}
	want1 := count(t, n1, tables)
	if got := count(t, n2, tables); got != want1 {
		t.Fatalf("after migrate the new replica has %d tables and views; the first has %d\n%s", got, want1, out)
	}
	syncReplicas(t, n2, db)
	if got := sums(t, n2, db); got != want(50) {
		t.Errorf("the new replica after migrate and sync: %v; want %v", got, want(50))
	}
	if got := sums(t, n1, db); got != want(50) {
		t.Errorf("the first replica after the new one joined: %v; want %v", got, want(50))
	}
	if again := runMigrate(cl.Nodes[1]); !strings.Contains(again, "repaired=[]") || !strings.Contains(again, "applied=[]") {
		t.Errorf("migrating the joined replica again did something:\n%s", again)
	}
}

// TestClusterShardOfMatchesDistributed, layout B: schema.ShardOf sends each
// Kafka partition to the shard a Distributed table with the schema's
// sharding key sends it to, for partitions on both shards.
func TestClusterShardOfMatchesDistributed(t *testing.T) {
	cl := testenv.Cluster(t, "B")
	n3, n4 := stackload.Open(t, cl.Nodes[0]), stackload.Open(t, cl.Nodes[1])
	db := "errtrail_cluster_s_" + uniq()
	dropDatabase(t, n3, cl, db)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	oc := " ON CLUSTER " + cl.Name
	for _, q := range []string{
		"CREATE DATABASE " + db + oc,
		"CREATE TABLE " + db + ".t_local" + oc + " (kafka_topic String, kafka_partition Int32) ENGINE = MergeTree ORDER BY kafka_partition",
		"CREATE TABLE " + db + ".t" + oc + " AS " + db + ".t_local ENGINE = Distributed(" + cl.Name + ", " + db + ", t_local, cityHash64(kafka_topic, kafka_partition))",
	} {
		if err := n3.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const topicName = "errtrail.shard-of"
	if err := n3.Exec(clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"insert_distributed_sync": 1})),
		"INSERT INTO "+db+".t SELECT '"+topicName+"', toInt32(number) FROM numbers(16)"); err != nil {
		t.Fatal(err)
	}
	shards, err := schema.ClusterShards(ctx, n3, schema.Options{Database: db, Cluster: cl.Name})
	if err != nil || len(shards) != 2 {
		t.Fatalf("shards of %s: %v, %v; want 2", cl.Name, shards, err)
	}
	on := [2]map[int]bool{partitionsOf(t, n3, db+".t_local"), partitionsOf(t, n4, db+".t_local")}
	if len(on[0]) == 0 || len(on[1]) == 0 {
		t.Fatalf("partitions per shard %v: want both shards used", on)
	}
	for p := 0; p < 16; p++ {
		i, err := schema.ShardOf(ctx, n3, shards, topicName, int32(p))
		if err != nil {
			t.Fatal(err)
		}
		if !on[i][p] || on[1-i][p] {
			t.Errorf("partition %d: ShardOf says shard %d; the Distributed table put it on %v", p, i+1, on)
		}
	}
}

// partitionsOf returns the kafka_partition values of table on conn.
func partitionsOf(t *testing.T, conn driver.Conn, table string) map[int]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := conn.Query(ctx, "SELECT DISTINCT kafka_partition FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int]bool{}
	for rows.Next() {
		var p int32
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		out[int(p)] = true
	}
	return out
}
