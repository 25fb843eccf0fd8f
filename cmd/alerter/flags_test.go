package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// clearEnv empties (for the test) every variable the alerter could read,
// so that the developer's environment does not leak in; an empty variable
// counts as unset.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		for _, p := range []string{"ERRTRAIL_ALERTER_", "ERRTRAIL_CLICKHOUSE_", "ERRTRAIL_LOG_"} {
			if strings.HasPrefix(k, p) {
				t.Setenv(k, "")
			}
		}
	}
}

// The ClickHouse and log flags read ingest's variables; the alerter's own
// ERRTRAIL_ALERTER_* variable wins over them, and the command line over
// both.
func TestEnvScheme(t *testing.T) {
	clearEnv(t)
	t.Setenv("ERRTRAIL_CLICKHOUSE_ADDR", "ch1:9000, ch2:9000")
	t.Setenv("ERRTRAIL_CLICKHOUSE_DATABASE", "shared_db")
	t.Setenv("ERRTRAIL_CLICKHOUSE_USER", "ingest_writer")
	t.Setenv("ERRTRAIL_ALERTER_CLICKHOUSE_USER", "alerter_reader")
	t.Setenv("ERRTRAIL_CLICKHOUSE_PASSWORD", "shared-pw")
	t.Setenv("ERRTRAIL_LOG_FORMAT", "json")
	t.Setenv("ERRTRAIL_LOG_LEVEL", "debug")
	t.Setenv("ERRTRAIL_ALERTER_EVALUATION_INTERVAL", "5s")
	t.Setenv("ERRTRAIL_EVALUATION_TIMEOUT", "1s") // not shared: ignored
	t.Setenv("ERRTRAIL_ALERTER_WINDOW_BASELINE", "2h")
	o, err := parseFlags([]string{"--clickhouse.database", "flag_db"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.chAddr, " ") != "ch1:9000 ch2:9000" || o.chDB != "flag_db" || o.chUser != "alerter_reader" ||
		*o.ch.Password() != "shared-pw" || !o.log.JSON || o.log.Level.String() != "DEBUG" || o.interval != 5*time.Second ||
		o.timeout != 10*time.Second || o.cfg.Baseline != 2*time.Hour {
		t.Errorf("got addr=%q db=%q user=%q password-set=%v json=%v level=%v interval=%v timeout=%v baseline=%v",
			o.chAddr, o.chDB, o.chUser, *o.ch.Password() != "", o.log.JSON, o.log.Level, o.interval, o.timeout, o.cfg.Baseline)
	}

	// The alerter's old password variable still works, and wins.
	t.Setenv("ERRTRAIL_ALERTER_CLICKHOUSE_PASSWORD", "alerter-pw")
	if o, err = parseFlags(nil, io.Discard); err != nil || *o.ch.Password() != "alerter-pw" {
		t.Errorf("ERRTRAIL_ALERTER_CLICKHOUSE_PASSWORD not used (err %v)", err)
	}

	// A bad variable stops start-up and is named.
	t.Setenv("ERRTRAIL_ALERTER_EVALUATION_INTERVAL", "often")
	if _, err = parseFlags(nil, io.Discard); err == nil || !strings.Contains(err.Error(), "ERRTRAIL_ALERTER_EVALUATION_INTERVAL") {
		t.Errorf("bad interval variable: %v", err)
	}
}

// Every flag the alerter shares with ingest reads the variable ingest
// reads for it (docs/ingest.md, "Flags").
func TestSharedVariablesAreIngests(t *testing.T) {
	ingest := map[string]string{
		"clickhouse.addr":                     "ERRTRAIL_CLICKHOUSE_ADDR",
		"clickhouse.database":                 "ERRTRAIL_CLICKHOUSE_DATABASE",
		"clickhouse.user":                     "ERRTRAIL_CLICKHOUSE_USER",
		"clickhouse.password":                 "ERRTRAIL_CLICKHOUSE_PASSWORD",
		"clickhouse.tls":                      "ERRTRAIL_CLICKHOUSE_TLS",
		"clickhouse.tls.ca-file":              "ERRTRAIL_CLICKHOUSE_TLS_CA_FILE",
		"clickhouse.tls.cert-file":            "ERRTRAIL_CLICKHOUSE_TLS_CERT_FILE",
		"clickhouse.tls.key-file":             "ERRTRAIL_CLICKHOUSE_TLS_KEY_FILE",
		"clickhouse.tls.server-name":          "ERRTRAIL_CLICKHOUSE_TLS_SERVER_NAME",
		"clickhouse.tls.insecure-skip-verify": "ERRTRAIL_CLICKHOUSE_TLS_INSECURE_SKIP_VERIFY",
		"log.level":                           "ERRTRAIL_LOG_LEVEL",
		"log.format":                          "ERRTRAIL_LOG_FORMAT",
	}
	var help bytes.Buffer
	parseFlags([]string{"--help"}, &help)
	for name, key := range ingest {
		if !strings.Contains(help.String(), "  -"+name+" ") && !strings.Contains(help.String(), "  -"+name+"\n") {
			t.Errorf("the alerter has no --%s", name)
		}
		if k := envKeys(name); len(k) != 2 || k[1] != key {
			t.Errorf("--%s reads %v; want %s after the alerter's own", name, k, key)
		}
	}
}

// --help exits 0, documents the password's variables and never prints the
// password itself.
func TestHelpHidesPassword(t *testing.T) {
	clearEnv(t)
	t.Setenv("ERRTRAIL_CLICKHOUSE_PASSWORD", "pw-shared-0f3a")
	t.Setenv("ERRTRAIL_ALERTER_CLICKHOUSE_PASSWORD", "pw-alerter-9c1d")
	for _, args := range [][]string{{"--help"}, {"-h"}, {"--no-such-flag"}} {
		var stderr bytes.Buffer
		code := run(context.Background(), args, &stderr)
		want := 0
		if args[0] == "--no-such-flag" {
			want = 2
		}
		if code != want {
			t.Errorf("%v: exit %d; want %d", args, code, want)
		}
		out := stderr.String()
		if strings.Contains(out, "pw-shared") || strings.Contains(out, "pw-alerter") {
			t.Errorf("%v prints the password:\n%s", args, out)
		}
		for _, s := range []string{"-clickhouse.password", "ERRTRAIL_ALERTER_CLICKHOUSE_PASSWORD, ERRTRAIL_CLICKHOUSE_PASSWORD",
			"-clickhouse.tls.ca-file", "-log.format", "-evaluation.stale-after", "-stale-after duration\n    \tdeprecated"} {
			if !strings.Contains(out, s) {
				t.Errorf("%v: usage lacks %q", args, s)
			}
		}
	}
}

// A log format other than text or json is a clear error, from the flag or
// from the variable, before anything starts.
func TestBadLogFormat(t *testing.T) {
	clearEnv(t)
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"--log.format", "yaml"}, &stderr); code != 2 {
		t.Errorf("exit %d; want 2", code)
	}
	if got := stderr.String(); got != "alerter: --log.format \"yaml\": want text or json\n" {
		t.Errorf("stderr %q", got)
	}
	t.Setenv("ERRTRAIL_LOG_FORMAT", "logfmt")
	if _, err := parseFlags(nil, io.Discard); err == nil || !strings.Contains(err.Error(), `--log.format "logfmt": want text or json`) {
		t.Errorf("ERRTRAIL_LOG_FORMAT=logfmt: %v", err)
	}
}

func TestInvalidSettings(t *testing.T) {
	clearEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--clickhouse.addr", " , "}, "names no address"},
		{[]string{"--clickhouse.database", "bad-name"}, "not a plain identifier"},
		{[]string{"--evaluation.stale-after", "0s"}, "must be positive"},
		{[]string{"--log.level", "loud"}, `--log.level "loud"`},
		{[]string{"--clickhouse.tls", "--clickhouse.tls.ca-file", "/nonexistent/ca.pem"}, "clickhouse TLS"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"--links.grafana-url", "grafana.example.com"}, "--links.grafana-url"},
		{[]string{"--links.grafana-url", "https://user:pw@grafana.example.com"}, "without credentials"},
		{[]string{"--links.lookup-url", "ftp://lookup.example.com"}, "--links.lookup-url"},
	} {
		_, err := parseFlags(tc.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want an error with %q", tc.args, err, tc.want)
		}
	}
}

// syncBuffer is a bytes.Buffer the alerter's goroutines may write while the
// test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// --stale-after still works, as --evaluation.stale-after, and the running
// alerter logs one warning however often it is given; the password appears
// in no log line. ClickHouse is unreachable: the alerter serves anyway.
func TestStaleAfterAlias(t *testing.T) {
	clearEnv(t)
	t.Setenv("ERRTRAIL_CLICKHOUSE_PASSWORD", "pw-never-logged-77")
	o, err := parseFlags([]string{"--stale-after", "2m"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.staleAfter != 2*time.Minute {
		t.Errorf("--stale-after 2m gave %v", o.staleAfter)
	}

	t.Setenv("ERRTRAIL_ALERTER_STALE_AFTER", "3m")
	if o, err = parseFlags(nil, io.Discard); err != nil || o.staleAfter != 3*time.Minute ||
		len(o.deprecations) != 1 || !strings.Contains(o.deprecations[0], "ERRTRAIL_ALERTER_EVALUATION_STALE_AFTER") {
		t.Errorf("ERRTRAIL_ALERTER_STALE_AFTER: %v, %v, %q", err, o.staleAfter, o.deprecations)
	}
	t.Setenv("ERRTRAIL_ALERTER_STALE_AFTER", "")

	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--stale-after", "2m", "--stale-after=90s", "--clickhouse.addr", "127.0.0.1:1",
			"--http.listen-address", "127.0.0.1:0", "--log.format", "json"}, &stderr)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), `"msg":"listening"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the alerter did not start:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit %d after cancel", c)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the alerter did not stop")
	}
	out := stderr.String()
	if n := strings.Count(out, `"level":"WARN","msg":"--stale-after is deprecated: use --evaluation.stale-after"`); n != 1 {
		t.Errorf("%d deprecation warnings; want 1:\n%s", n, out)
	}
	if strings.Contains(out, "pw-never-logged") {
		t.Errorf("the log contains the password:\n%s", out)
	}
	if !strings.Contains(out, `"msg":"stopped"`) {
		t.Errorf("no clean stop in the log:\n%s", out)
	}
}

// The links' base URLs reach the options without a trailing slash; empty
// means no link.
func TestLinks(t *testing.T) {
	clearEnv(t)
	o, err := parseFlags([]string{"--links.grafana-url", "https://grafana.example.com/", "--links.lookup-url", "https://errtrail.example.com/lookup/"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.links.GrafanaURL != "https://grafana.example.com" || o.links.LookupURL != "https://errtrail.example.com/lookup" {
		t.Errorf("links = %+v; want both without the trailing slash", o.links)
	}
	o, err = parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.links.GrafanaURL != "http://localhost:3000" || o.links.LookupURL != "" {
		t.Errorf("default links = %+v; want http://localhost:3000 and none", o.links)
	}
}
