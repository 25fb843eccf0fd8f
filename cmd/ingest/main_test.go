package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/testenv"
)

func TestFlagsEnvFallbackAndSecrets(t *testing.T) {
	t.Setenv("ERRTRAIL_KAFKA_BROKERS", "k1:9092,k2:9092")
	t.Setenv("ERRTRAIL_BATCH_WAIT", "250ms")
	t.Setenv("ERRTRAIL_CLICKHOUSE_PASSWORD", "hunter2")
	var stderr bytes.Buffer
	fs, o := newFlags("run", &stderr)
	if err := fs.Parse([]string{"--batch.rows", "7"}); err != nil {
		t.Fatal(err)
	}
	o.resolve()
	if *o.brokers != "k1:9092,k2:9092" || *o.wait != 250*time.Millisecond || *o.rows != 7 || *o.ch.Password() != "hunter2" {
		t.Errorf("got brokers=%q wait=%v rows=%d password set=%v", *o.brokers, *o.wait, *o.rows, *o.ch.Password() != "")
	}
	// A flag wins over the environment.
	fs, o = newFlags("run", &stderr)
	fs.Parse([]string{"--clickhouse.password", "flag"})
	o.resolve()
	if *o.ch.Password() != "flag" {
		t.Errorf("flag did not win over env")
	}
	// --help documents every flag with its variable and never prints a secret.
	stderr.Reset()
	fs, _ = newFlags("run", &stderr)
	fs.SetOutput(&stderr)
	fs.PrintDefaults()
	help := stderr.String()
	if strings.Contains(help, "hunter2") {
		t.Error("--help shows the password from the environment")
	}
	for _, want := range []string{"ERRTRAIL_KAFKA_BROKERS", "ERRTRAIL_CLICKHOUSE_ADDR", "kafka.sasl.mechanism", "clickhouse.tls.ca-file", "batch.bytes", "http.listen-address", "retention.days", "gc.percent", "memory.limit-mib"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %s", want)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"frobnicate"}, nil, &out, &errb); code != 2 {
		t.Errorf("exit %d; want 2", code)
	}
}

// TestInvalidDatabaseNameFailsFast: a setting that can never work ends the
// process at once (exit 2) instead of retrying as if the server were down.
// The address points nowhere, so reaching the retry loop would hang.
func TestInvalidDatabaseNameFailsFast(t *testing.T) {
	for _, cmd := range []string{"run", "migrate"} {
		var out, errb bytes.Buffer
		code := run([]string{cmd, "--clickhouse.database", "bad-name", "--clickhouse.addr", "127.0.0.1:1"}, nil, &out, &errb)
		if code != 2 {
			t.Errorf("%s: exit %d; want 2", cmd, code)
		}
		if !strings.Contains(errb.String(), "not a plain identifier") {
			t.Errorf("%s: log does not say why: %s", cmd, errb.String())
		}
	}
}

// TestBadLogSettingsFailFast: a --log.level or --log.format ingest does
// not know ends the process at once (exit 2) with an error naming the
// flag, as the other commands do; it was taken silently as info or text.
// The address points nowhere, so going on would hang.
func TestBadLogSettingsFailFast(t *testing.T) {
	for _, bad := range [][]string{{"--log.level", "loud"}, {"--log.format", "xml"}} {
		for _, cmd := range []string{"run", "migrate"} {
			var out, errb bytes.Buffer
			code := run(append([]string{cmd, "--clickhouse.addr", "127.0.0.1:1"}, bad...), nil, &out, &errb)
			if code != 2 || !strings.Contains(errb.String(), bad[0]) {
				t.Errorf("%s %v: exit %d, stderr %q; want 2 and the flag named", cmd, bad, code, errb.String())
			}
		}
	}
}

// TestNoTopicFailsFast: a topic list with no name in it ends run at once.
func TestNoTopicFailsFast(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"run", "--kafka.topic", " , ", "--clickhouse.addr", "127.0.0.1:1"}, nil, &out, &errb)
	if code != 2 {
		t.Errorf("exit %d; want 2", code)
	}
	if !strings.Contains(errb.String(), "names no topic") {
		t.Errorf("log does not say why: %s", errb.String())
	}
}

// TestMigratePrint renders the DDL for the real server.
func TestMigratePrint(t *testing.T) {
	addr := testenv.ClickHouse(t)
	var out, errb bytes.Buffer
	if code := run([]string{"migrate", "--print", "--clickhouse.addr", addr}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "CREATE TABLE IF NOT EXISTS errtrail.landing") {
		t.Errorf("DDL lacks the landing table:\n%.500s", out.String())
	}
}
