package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/testenv"
)

// The user and password the alerter reads from ingest's variables reach
// the real server. The stack's ClickHouse has only a passwordless default
// user (scripts/stack), and this test adds none to the shared server, so it
// shows the credentials are sent by the server accepting the right (empty)
// password and refusing a wrong one and an unknown user.
func TestClickHouseCredentialsFromEnv(t *testing.T) {
	addr := testenv.ClickHouse(t)
	clearEnv(t)
	t.Setenv("ERRTRAIL_CLICKHOUSE_ADDR", addr)
	// The alerter logs in to its database; system is on every server (a
	// fresh one has no errtrail database yet).
	t.Setenv("ERRTRAIL_CLICKHOUSE_DATABASE", "system")
	ping := func() error {
		t.Helper()
		o, err := parseFlags(nil, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := connectClickHouse(o)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return conn.Ping(ctx)
	}

	t.Setenv("ERRTRAIL_CLICKHOUSE_USER", "default")
	if err := ping(); err != nil {
		t.Fatalf("default user without a password: %v", err)
	}
	t.Setenv("ERRTRAIL_CLICKHOUSE_PASSWORD", "wrong-pw-5e2b")
	err := ping()
	if err == nil {
		t.Fatal("a wrong password from ERRTRAIL_CLICKHOUSE_PASSWORD was accepted: it did not reach the server")
	}
	if strings.Contains(err.Error(), "wrong-pw-5e2b") {
		t.Errorf("the error quotes the password: %v", err)
	}
	t.Logf("wrong password refused: %v", err)
	t.Setenv("ERRTRAIL_CLICKHOUSE_PASSWORD", "")
	t.Setenv("ERRTRAIL_ALERTER_CLICKHOUSE_USER", "errtrail_no_such_user")
	if err := ping(); err == nil {
		t.Error("an unknown user from ERRTRAIL_ALERTER_CLICKHOUSE_USER was accepted")
	}
}
