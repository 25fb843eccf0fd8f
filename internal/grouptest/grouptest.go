// Package grouptest writes error replies with chosen times, agents and
// versions into a migrated database's landing table, for the tests of the
// error groups (groups/, alerter/, api/, cmd/errtrail, web/): the rows go
// through the same materialized views as the ingester's.
package grouptest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/schema"
)

// Reply is one decoded error reply as the test wants it stored.
type Reply struct {
	At       time.Time
	Agent    string
	Caller   string
	Protocol string // default "a2a"
	Code     string
	Reason   string
	Kind     string // default "internal"
	Method   string // default "SendMessage"
	Version  string // source_version
	ErrorID  string
}

var seq atomic.Int64

// OpenDB migrates a database of the process's own (dropped after the
// test) on the stack's ClickHouse and returns the connection and its name.
func OpenDB(t testing.TB, prefix string) (driver.Conn, string) {
	t.Helper()
	addr := testenv.ClickHouse(t)
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: strings.Split(addr, ","), Protocol: clickhouse.Native,
		Auth: clickhouse.Auth{Database: "default", Username: "default"}, DialTimeout: testenv.CHDialTimeout, ReadTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	db := fmt.Sprintf("%s_%d_%d_%d", prefix, os.Getpid(), time.Now().UnixNano()%1e9, seq.Add(1))
	ctx := context.Background()
	if _, err := schema.Migrate(ctx, conn, schema.Options{Database: db}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db) })
	return conn, db
}

// Write inserts the replies into db's landing table as one batch.
func Write(t testing.TB, conn driver.Conn, db string, replies ...Reply) {
	t.Helper()
	if err := WriteErr(conn, db, replies...); err != nil {
		t.Fatal(err)
	}
}

// WriteErr is Write returning the error.
func WriteErr(conn driver.Conn, db string, replies ...Reply) error {
	ctx := context.Background()
	b, err := conn.PrepareBatch(ctx, schema.LandingInsert(schema.Options{Database: db}))
	if err != nil {
		return err
	}
	defer b.Abort()
	now := time.Now().UTC().Truncate(time.Second)
	for _, r := range replies {
		n := seq.Add(1)
		if r.Protocol == "" {
			r.Protocol = "a2a"
		}
		if r.Kind == "" {
			r.Kind = "internal"
		}
		if r.Method == "" {
			r.Method = "SendMessage"
		}
		vals := make([]any, len(schema.LandingColumns))
		for i, c := range schema.LandingColumns {
			switch c.Name {
			case "event_id":
				vals[i] = fmt.Sprintf("grouptest-%d-%d", os.Getpid(), n)
			case "observed_at":
				vals[i] = r.At.UTC().Truncate(time.Second)
			case "observed_at_ms":
				vals[i] = uint64(r.At.UnixMilli())
			case "ingested_at":
				vals[i] = now
			case "kafka_topic":
				vals[i] = "grouptest"
			case "kafka_offset":
				vals[i] = n
			case "source_kind":
				vals[i] = "agent"
			case "agent":
				vals[i] = r.Agent
			case "caller":
				vals[i] = r.Caller
			case "method":
				vals[i] = r.Method
			case "protocol":
				vals[i] = r.Protocol
			case "code":
				vals[i] = r.Code
			case "reason":
				vals[i] = r.Reason
			case "kind":
				vals[i] = r.Kind
			case "retryable":
				vals[i] = int8(-1)
			case "retry_after_ms":
				vals[i] = int64(-1)
			case "error_id":
				vals[i] = r.ErrorID
			case "source_version":
				vals[i] = r.Version
			default:
				switch c.Type {
				case "String":
					vals[i] = ""
				case "Array(String)":
					vals[i] = []string{}
				case "UInt8":
					vals[i] = uint8(0)
				case "Int8":
					vals[i] = int8(0)
				case "UInt16":
					vals[i] = uint16(0)
				case "Int32":
					vals[i] = int32(0)
				case "UInt32":
					vals[i] = uint32(0)
				case "Int64":
					vals[i] = int64(0)
				case "UInt64":
					vals[i] = uint64(0)
				default:
					return fmt.Errorf("grouptest: no default for column %s %s", c.Name, c.Type)
				}
			}
		}
		if err := b.Append(vals...); err != nil {
			return err
		}
	}
	return b.Send()
}

// Every returns n replies like r, one every step from start.
func Every(r Reply, start time.Time, step time.Duration, n int) []Reply {
	out := make([]Reply, n)
	for i := range out {
		out[i] = r
		out[i].At = start.Add(time.Duration(i) * step)
	}
	return out
}
