// Package stackload gives tests on the real stack a scenario's replies as
// production stores them: the load tool publishes a built-in scenario to a
// fresh Kafka topic, ingest.Pipeline (in process) stores it in a fresh
// ClickHouse database with the production schema, and both are dropped when
// the test ends (kept with ERRTRAIL_KEEP_TEST_DATA set). Topic does the
// same for a topic the test filled itself (emit's publishers, the tap).
// The servers come from internal/testenv: missing, the test skips outside
// CI and fails in CI.
package stackload

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/loadgen"
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
	id := newID()
	topic := "errtrail.stackload." + id
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := loadgen.EnsureTopic(ctx, brokers, topic, 2); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	t.Cleanup(func() {
		if os.Getenv("ERRTRAIL_KEEP_TEST_DATA") != "" {
			t.Logf("kept topic %s", topic)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
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
	return ingestTopic(t, brokers, addr, topic, id, rep.Produced)
}

// Open connects to ClickHouse at addr; the connection closes at the test's end.
func Open(t testing.TB, addr string) driver.Conn {
	t.Helper()
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr: []string{addr}, Protocol: clickhouse.Native,
		DialTimeout: testenv.CHDialTimeout, ReadTimeout: 60 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// ClosedPort is a loopback address nothing listens on (testenv.FreeAddr:
// never one another test of this process was given).
func ClosedPort(t testing.TB) string {
	t.Helper()
	return testenv.FreeAddr(t)
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
