// Package stackload gives tests on the real stack a scenario's replies as
// production stores them: the load tool publishes a built-in scenario to a
// fresh Kafka topic, ingest.Pipeline (in process) stores it in a fresh
// ClickHouse database with the production schema, and both are dropped when
// the test ends (kept with ERRTRAIL_KEEP_TEST_DATA set). The servers come
// from internal/testenv: missing, the test skips outside CI and fails in CI.
package stackload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/loadgen"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/schema"
)

// Data is one scenario stored in a fresh database.
type Data struct {
	Conn     driver.Conn // to the database's server; closed at the test's end
	Addr     string      // ClickHouse native address
	Database string
	Produced int64 // messages published (every one is in errors or dead_letter)
}

// Scenario publishes the built-in scenario name, unpaced on the scenario
// clock (its retry gaps kept, ending now), and ingests every message.
func Scenario(t testing.TB, name string) *Data {
	t.Helper()
	brokers := strings.Split(testenv.Kafka(t), ",")
	addr := strings.Split(testenv.ClickHouse(t), ",")[0]
	id := fmt.Sprintf("%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1e6))
	topic, group := "errtrail.stackload."+id, "errtrail-stackload-"+id
	sopt := schema.Options{Database: "errtrail_stackload_" + id}
	conn := Open(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mig, err := schema.Migrate(ctx, conn, sopt)
	if err != nil {
		t.Fatalf("migrate %s: %v", sopt.Database, err)
	}
	if err := loadgen.EnsureTopic(ctx, brokers, topic, 2); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	t.Cleanup(func() {
		if os.Getenv("ERRTRAIL_KEEP_TEST_DATA") != "" {
			t.Logf("kept database %s and topic %s", sopt.Database, topic)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+sopt.Database)
		if _, err := loadgen.DropTopics(ctx, brokers, "", []string{topic}); err != nil {
			t.Logf("drop topic %s: %v", topic, err)
		}
	})

	sc, err := loadgen.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := loadgen.Run(ctx, loadgen.Config{
		Brokers: brokers, Topic: topic, Scenario: sc,
		Speed: 0, Clock: "scenario", Start: time.Now().Add(-sc.Total()).Truncate(time.Second),
		Compression: true, KeepIDs: -1,
	})
	if err != nil {
		t.Fatalf("loadgen: %v", err)
	}

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: brokers, GroupID: group, Topic: topic,
		MinBytes: 1, MaxBytes: 8 << 20, MaxWait: 200 * time.Millisecond,
		StartOffset: kafka.FirstOffset, CommitInterval: 0,
		SessionTimeout: 6 * time.Second, HeartbeatInterval: time.Second,
		RebalanceTimeout: 10 * time.Second, JoinGroupBackoff: time.Second,
	})
	defer r.Close()
	p, err := ingest.New(ingest.Config{
		Topics:  []string{topic},
		Table:   sopt.Database + "." + schema.TableLanding,
		Limits:  ingest.Limits{Rows: 5000, Wait: 300 * time.Millisecond},
		Backoff: ingest.Backoff{Max: 2 * time.Second},
		Progress: func(ctx context.Context, conn driver.Conn, topic string) (map[int32]int64, error) {
			return schema.Progress(ctx, conn, sopt, topic)
		},
		InsertSettings: func(token string) map[string]any { return schema.InsertSettings(mig.Server, token) },
		Decoder:        parse.Options{},
		LagInterval:    -1,
		Logger:         Logger(t),
		Metrics:        ingest.NewMetrics(nil),
	}, r, conn)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(runCtx) }()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var errs, dead uint64
		qerr := conn.QueryRow(ctx, "SELECT (SELECT count() FROM "+sopt.Database+".errors), (SELECT count() FROM "+sopt.Database+".dead_letter)").Scan(&errs, &dead)
		if qerr == nil && int64(errs+dead) >= rep.Produced {
			break
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("ingest stored %d + %d dead of %d messages in 3 minutes (%v)", errs, dead, rep.Produced, qerr)
		}
		time.Sleep(300 * time.Millisecond)
	}
	stop()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("ingest stopped: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("ingest did not stop within a minute")
	}
	return &Data{Conn: conn, Addr: addr, Database: sopt.Database, Produced: rep.Produced}
}

// Open connects to ClickHouse at addr; the connection closes at the test's end.
func Open(t testing.TB, addr string) driver.Conn {
	t.Helper()
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr: []string{addr}, Protocol: clickhouse.Native,
		DialTimeout: 3 * time.Second, ReadTimeout: 60 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// ClosedPort is a loopback address nothing listens on.
func ClosedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Logger writes warnings and errors to the test log (with -v; else nowhere).
func Logger(t testing.TB) *slog.Logger {
	var w io.Writer = io.Discard
	if testing.Verbose() {
		w = tlog{t}
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tlog struct{ t testing.TB }

func (l tlog) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
