package stackload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/schema"
)

// Topic ingests an existing topic of the stack's Kafka, which the test has
// filled with want messages (emit's publishers, the tap), into a fresh
// database with the production schema, and returns once every one of them
// is a row in errors or dead_letter. The database is dropped when the test
// ends; the topic is the caller's.
func Topic(t testing.TB, topic string, want int64) *Data {
	t.Helper()
	brokers := strings.Split(testenv.Kafka(t), ",")
	addr := strings.Split(testenv.ClickHouse(t), ",")[0]
	return ingestTopic(t, brokers, addr, topic, newID(), want)
}

func newID() string { return fmt.Sprintf("%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1e6)) }

// ingestTopic migrates the database errtrail_stackload_<id> and runs
// ingest.Pipeline on topic (consumer group errtrail-stackload-<id>) until
// errors and dead_letter hold want rows.
func ingestTopic(t testing.TB, brokers []string, addr, topic, id string, want int64) *Data {
	t.Helper()
	group := "errtrail-stackload-" + id
	sopt := schema.Options{Database: "errtrail_stackload_" + id}
	conn := Open(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mig, err := schema.Migrate(ctx, conn, sopt)
	if err != nil {
		t.Fatalf("migrate %s: %v", sopt.Database, err)
	}
	t.Cleanup(func() {
		if os.Getenv("ERRTRAIL_KEEP_TEST_DATA") != "" {
			t.Logf("kept database %s", sopt.Database)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+sopt.Database)
	})

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
		qerr := conn.QueryRow(ctx, "SELECT (SELECT count() FROM "+sopt.Database+"."+schema.TableErrors+"), (SELECT count() FROM "+sopt.Database+"."+schema.TableDeadLetter+")").Scan(&errs, &dead)
		if qerr == nil && int64(errs+dead) >= want {
			break
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("ingest stored %d + %d dead of %d messages in 3 minutes (%v)", errs, dead, want, qerr)
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
	return &Data{Conn: conn, Addr: addr, Database: sopt.Database, Produced: want}
}
