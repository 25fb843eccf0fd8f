package main

// The alerter's ClickHouse users on 18.16 (docs/operations.md, "The
// alerter's ClickHouse user"). 18.16 has no GRANT: users.xml gives a user a
// profile (readonly or not) and the databases it may use. A ClickHouse of
// the test's own (testenv.Own, the shared server's users stay as they are)
// gets two users besides default: errtrail_reader, whose profile is
// readonly = 2 (reads and per-query settings, no write of any kind), and
// errtrail_alerter, readonly = 0 but allowed the errtrail database only.
// The real command (run) evaluates against each.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/schema"
)

const alerterUsersXML = `<?xml version="1.0"?>
<!-- Written by cmd/alerter's TestAlerterUsers18 on its own ClickHouse. -->
<yandex>
    <profiles>
        <default><max_memory_usage>4000000000</max_memory_usage></default>
        <errtrail_reader><readonly>2</readonly></errtrail_reader>
        <errtrail_alerter><readonly>0</readonly></errtrail_alerter>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>::1</ip><ip>127.0.0.1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
        <errtrail_reader>
            <password></password>
            <networks><ip>::1</ip><ip>127.0.0.1</ip></networks>
            <profile>errtrail_reader</profile>
            <quota>default</quota>
            <allow_databases><database>errtrail</database></allow_databases>
        </errtrail_reader>
        <errtrail_alerter>
            <password></password>
            <networks><ip>::1</ip><ip>127.0.0.1</ip></networks>
            <profile>errtrail_alerter</profile>
            <quota>default</quota>
            <allow_databases><database>errtrail</database></allow_databases>
        </errtrail_alerter>
    </users>
    <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
        <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`

// syncBuf is an io.Writer the alerter logs into while the test reads it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func openAs(t *testing.T, addr, user string) driver.Conn {
	t.Helper()
	c, err := clickhouse.Open(&clickhouse.Options{Addr: []string{addr}, Auth: clickhouse.Auth{Username: user}, DialTimeout: testenv.CHDialTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// alerterRun runs the alerter as user until its second evaluation is done
// (the /metrics counter of evaluations), then stops it; it returns the
// metrics page and the log.
func alerterRun(t *testing.T, addr, user string, incidents bool) (metrics, log string) {
	t.Helper()
	listen := testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuf{}
	done := make(chan int, 1)
	args := []string{"--clickhouse.addr", addr, "--clickhouse.user", user, "--http.listen-address", listen,
		"--evaluation.interval", "1s", fmt.Sprintf("--incidents.enabled=%v", incidents), "--incidents.writer", "users-test"}
	go func() { done <- run(ctx, args, stderr) }()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("the alerter as %s exited %d: %s", user, code, stderr.String())
		}
	}()
	for i := 0; ; i++ {
		if resp, err := http.Get("http://" + listen + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			metrics = string(b)
			if metric(metrics, `errtrail_alerter_evaluations_total{result="success"}`) >= 2 ||
				metric(metrics, `errtrail_alerter_evaluations_total{result="failure"}`) > 0 {
				return metrics, stderr.String()
			}
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("the alerter as %s exited %d: %s", user, code, stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if i == 1200 {
			t.Fatalf("the alerter as %s did not evaluate twice in 2 minutes:\n%s\n%s", user, metrics, stderr.String())
		}
	}
}

// metric is the value of one series on a /metrics page, -1 when absent.
func metric(page, series string) float64 {
	for _, line := range strings.Split(page, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err == nil {
				return f
			}
		}
	}
	return -1
}

func TestAlerterUsers18(t *testing.T) {
	own := testenv.Own(t, "clickhouse")
	addr := own.ClickHouse(t)
	ctx := context.Background()
	admin := openAs(t, addr, "default")
	if _, err := schema.Migrate(ctx, admin, schema.Options{Database: "errtrail"}); err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(own.Dir(), "clickhouse", "users.xml")
	if err := os.WriteFile(users, []byte(alerterUsersXML), 0o644); err != nil {
		t.Fatal(err)
	}
	// The server re-reads users.xml when its modification time (whole
	// seconds) changes, which a write in the second the server read it
	// does not show: date the file later, ask for a reload as well, then
	// wait until both users exist.
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(users, later, later); err != nil {
		t.Fatal(err)
	}
	if err := admin.Exec(ctx, "SYSTEM RELOAD CONFIG"); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"errtrail_reader", "errtrail_alerter"} {
		for i := 0; ; i++ {
			c := openAs(t, addr, u)
			err := c.Ping(ctx)
			if err == nil {
				break
			}
			if i == 300 {
				t.Fatalf("user %s after 30 s: %v", u, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	written := func() (n uint64) {
		t.Helper()
		if err := admin.QueryRow(ctx, "SELECT (SELECT count() FROM errtrail.incidents) + (SELECT count() FROM errtrail.alerter_minutes)").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	failures := func(metrics string) bool {
		return metric(metrics, `errtrail_alerter_incident_writes_total{result="failure"}`) > 0
	}
	evaluated := func(metrics string) bool {
		return metric(metrics, `errtrail_alerter_evaluations_total{result="success"}`) >= 2 &&
			metric(metrics, `errtrail_alerter_evaluations_total{result="failure"}`) <= 0
	}

	// The reader cannot write: the server itself refuses it (the control
	// that makes the next case mean something).
	reader := openAs(t, addr, "errtrail_reader")
	if err := reader.Exec(ctx, "INSERT INTO errtrail.alerter_minutes (minute, writer, last_at) VALUES (now(), 'x', now())"); err == nil {
		t.Fatal("errtrail_reader (readonly = 2) inserted a row")
	}

	// --incidents.enabled=false as the reader: evaluates, and tries no write.
	metrics, log := alerterRun(t, addr, "errtrail_reader", false)
	if !evaluated(metrics) {
		t.Errorf("read-only alerter: no two successful evaluations:\n%s\n%s", metrics, log)
	}
	if failures(metrics) || strings.Contains(log, "incidents not recorded") {
		t.Errorf("read-only alerter with incidents disabled tried a write:\n%s", log)
	}
	if n := written(); n != 0 {
		t.Errorf("%d rows written by a read-only alerter", n)
	}

	// Incidents enabled as the reader: it still evaluates; every write is
	// refused, logged and counted, and nothing is stored.
	metrics, log = alerterRun(t, addr, "errtrail_reader", true)
	if !evaluated(metrics) || !failures(metrics) || !strings.Contains(log, "incidents not recorded") {
		t.Errorf("incidents enabled as a read-only user: want two evaluations and failed writes counted and logged:\n%s\n%s", metrics, log)
	}
	if n := written(); n != 0 {
		t.Errorf("%d rows written as a read-only user", n)
	}

	// errtrail_alerter records (alerter_minutes, at least), and may not
	// touch another database.
	metrics, log = alerterRun(t, addr, "errtrail_alerter", true)
	if !evaluated(metrics) || failures(metrics) || written() == 0 {
		t.Errorf("errtrail_alerter: %d rows written; want its minutes recorded without a failed write:\n%s", written(), log)
	}
	alert := openAs(t, addr, "errtrail_alerter")
	for _, q := range []string{"CREATE DATABASE errtrail_other", "CREATE TABLE default.errtrail_x (x UInt8) ENGINE = Memory", "SELECT count() FROM default.errtrail_none"} {
		if err := alert.Exec(ctx, q); err == nil {
			t.Errorf("errtrail_alerter may run %q outside the errtrail database", q)
		} else {
			t.Logf("refused, as it must be: %s: %v", q, err)
		}
	}
}
