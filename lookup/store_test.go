package lookup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/errtrail/errtrail/internal/testenv"
)

// TestUnitStoreErrorKinds: the server's configuration answers (unknown
// database, table, column, user, wrong password, no grant) are a
// *ConfigError with a hint, never an *UnavailableError; a timeout or any
// other failure stays *UnavailableError. The id is cut out of both. No
// server: the errors are built by hand.
func TestUnitStoreErrorKinds(t *testing.T) {
	const id = "dana@customer.example"
	for code, want := range map[int32]string{81: "--clickhouse.database", 60: "ingest migrate", 47: "ingest migrate",
		192: "--clickhouse.user", 193: "password", 516: "password", 497: "grant SELECT"} {
		err := unavailable(fmt.Errorf("schema: lookup: %w", &clickhouse.Exception{Code: code, Message: "about " + id}), []string{id})
		var ce *ConfigError
		var ue *UnavailableError
		if !errors.As(err, &ce) || errors.As(err, &ue) {
			t.Errorf("code %d: %T %v; want *ConfigError only", code, err, err)
			continue
		}
		if !strings.Contains(ce.Hint, want) || strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "[id]") {
			t.Errorf("code %d: %q; want a hint naming %q and the id cut out", code, err, want)
		}
	}
	for _, cause := range []error{context.DeadlineExceeded, errors.New("dial tcp: connection refused"),
		&clickhouse.Exception{Code: 241, Message: "Memory limit exceeded"}} {
		err := unavailable(cause, nil)
		var ce *ConfigError
		var ue *UnavailableError
		if !errors.As(err, &ue) || errors.As(err, &ce) {
			t.Errorf("%v: %T; want *UnavailableError only", cause, err)
		}
	}
	// Already sorted: kept as it is.
	ce := &ConfigError{Hint: "h", Err: errors.New("e")}
	if got := StoreError(ce); got != ce {
		t.Errorf("StoreError re-wrapped a *ConfigError: %v", got)
	}
}

// TestStoryConfigErrors: on the real server, a database that does not
// exist, one without errtrail's tables, an unknown user and a wrong
// password answer *ConfigError (not "unavailable, retry"), never quoting
// the id.
func TestStoryConfigErrors(t *testing.T) {
	conn, _ := openDB(t) // a server that answers
	addr := strings.Split(testenv.ClickHouse(t), ",")
	ctx := context.Background()
	empty := fmt.Sprintf("errtrail_lookup_empty_%d", time.Now().UnixNano()%1e9)
	if err := conn.Exec(ctx, "CREATE DATABASE "+empty); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+empty) })
	const id = "err_01HZ9CONFIG"
	check := func(name string, f *Finder, hint string) {
		t.Helper()
		_, err := f.Story(ctx, id, FindOptions{})
		var ce *ConfigError
		var ue *UnavailableError
		if !errors.As(err, &ce) || errors.As(err, &ue) {
			t.Errorf("%s: %T %v; want *ConfigError", name, err, err)
			return
		}
		if !strings.Contains(ce.Hint, hint) || strings.Contains(err.Error(), id) {
			t.Errorf("%s: %q; want the hint %q and no id", name, err, hint)
		}
	}
	check("no such database", &Finder{Conn: conn, Database: "errtrail_lookup_no_such_db"}, "--clickhouse.database")
	check("no tables", &Finder{Conn: conn, Database: empty}, "ingest migrate")
	for _, u := range []struct{ name, user, pass, hint string }{
		{"unknown user", "errtrail_no_such_user", "", "user"},
		{"wrong password", "default", "not-the-password", "password"},
	} {
		c, err := clickhouse.Open(&clickhouse.Options{Addr: addr, Auth: clickhouse.Auth{Username: u.user, Password: u.pass}, DialTimeout: testenv.CHDialTimeout})
		if err != nil {
			t.Fatal(err)
		}
		check(u.name, &Finder{Conn: c}, u.hint)
		c.Close()
	}
}
