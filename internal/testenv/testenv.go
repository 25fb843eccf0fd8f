// Package testenv finds the real servers that integration tests need.
//
// The local stack (scripts/stack) starts Apache Kafka, ClickHouse, Prometheus
// and Alertmanager and writes their addresses to .stack/env; the variables
// ERRTRAIL_KAFKA_BROKERS, ERRTRAIL_CLICKHOUSE_ADDR, ERRTRAIL_CLICKHOUSE_HTTP,
// ERRTRAIL_PROMETHEUS_ADDR and ERRTRAIL_ALERTMANAGER_ADDR override them. When
// a server is not reachable a test is skipped outside CI and fails in CI
// (CI set to anything but empty, 0 or false), so an integration test can never vanish from a CI run unnoticed.
// Own starts servers of a test's own for fault tests (restart, kill, pause a
// server) without disturbing the tests that share the stack.
package testenv

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Defaults match scripts/stack.
const (
	DefaultKafka          = "127.0.0.1:19092"
	DefaultClickHouse     = "127.0.0.1:19000"
	DefaultClickHouseHTTP = "127.0.0.1:18123"
	DefaultPrometheus     = "127.0.0.1:19090"
	DefaultAlertmanager   = "127.0.0.1:19093"
)

// CHDialTimeout bounds a test's connection to ClickHouse, its handshake
// included (clickhouse-go bounds the handshake by Options.DialTimeout).
// The stack's ClickHouse 18.16 is shared by every test and, in CI's
// stress runs, by two suites: under their DDL it has held every query,
// new handshakes included, for 5.5 s at once (its log silent, then each
// waiting query done together), and a 5 s bound failed a test
// that had done nothing wrong. Tests assert outcomes, not speed, so the
// bound is a hang guard.
const CHDialTimeout = 30 * time.Second

// Kafka returns the broker address or stops the test.
func Kafka(t testing.TB) string { return need(t, "ERRTRAIL_KAFKA_BROKERS", DefaultKafka, "Kafka") }

// ClickHouse returns the native-protocol address or stops the test.
func ClickHouse(t testing.TB) string {
	return need(t, "ERRTRAIL_CLICKHOUSE_ADDR", DefaultClickHouse, "ClickHouse")
}

// ClickHouseHTTP returns host:port of ClickHouse's HTTP interface or stops
// the test.
func ClickHouseHTTP(t testing.TB) string {
	return need(t, "ERRTRAIL_CLICKHOUSE_HTTP", DefaultClickHouseHTTP, "ClickHouse HTTP")
}

// Prometheus returns host:port of Prometheus or stops the test.
func Prometheus(t testing.TB) string {
	return need(t, "ERRTRAIL_PROMETHEUS_ADDR", DefaultPrometheus, "Prometheus")
}

// Alertmanager returns host:port of Alertmanager or stops the test.
func Alertmanager(t testing.TB) string {
	return need(t, "ERRTRAIL_ALERTMANAGER_ADDR", DefaultAlertmanager, "Alertmanager")
}

// InCI reports whether the tests run in CI, where missing servers fail:
// CI set to any value but empty, "0" or "false" (in any case), as CI
// services set it ("true", "1", "yes", "True", ...).
func InCI() bool { return isCI(os.Getenv("CI")) }

func isCI(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false":
		return false
	}
	return true
}

// Lookup returns the configured address for an env key (environment first,
// then .stack/env in the repository root, then def).
func Lookup(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	if v := fromStackEnv(key); v != "" {
		return v
	}
	return def
}

func need(t testing.TB, key, def, what string) string {
	t.Helper()
	addr := Lookup(key, def)
	first := strings.Split(addr, ",")[0]
	c, err := net.DialTimeout("tcp", first, 2*time.Second)
	if err == nil {
		c.Close()
		return addr
	}
	msg := what + " is not reachable at " + first + " (" + err.Error() + "); start it with scripts/stack up"
	if InCI() {
		t.Fatal("in CI (CI=" + os.Getenv("CI") + ") and " + msg)
	}
	t.Skip("skipped outside CI: " + msg)
	return ""
}

// Binary returns the path of a program the stack installs (promtool,
// amtool, prometheus, ...). When it is not on PATH the test fails in CI and
// is skipped elsewhere, with the install command in the message.
func Binary(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := name + " is not installed (scripts/stack install installs it)"
	if InCI() {
		t.Fatal("in CI (CI=" + os.Getenv("CI") + ") and " + msg)
	}
	t.Skip("skipped outside CI: " + msg)
	return ""
}

// Stack runs scripts/stack from the repository root with args on the shared
// stack, for example Stack(t, "status"), logs its output and fails the test
// when it fails. It refuses to start, stop, restart, kill, pause or resume a
// shared server: scripts/test runs packages at the same time, and the other
// tests use those servers meanwhile. A fault test does that to servers of
// its own (Own, OwnStack.Stack).
func Stack(t testing.TB, args ...string) {
	t.Helper()
	if len(args) > 0 {
		for _, verb := range []string{"start-", "stop-", "restart-", "kill-", "pause-", "resume-"} {
			if strings.HasPrefix(args[0], verb) {
				t.Fatalf("testenv.Stack(%q): the shared stack's servers serve the other tests running meanwhile; "+
					"break servers of the test's own instead (testenv.Own)", args[0])
			}
		}
	}
	root := moduleRoot()
	if root == "" {
		t.Fatal("testenv.Stack: no go.mod in the working directory or above it")
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "stack"), args...)
	cmd.Dir = root
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("scripts/stack %s (%s):\n%s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("scripts/stack %s: %v", strings.Join(args, " "), err)
	}
}

// ModuleRoot is the nearest directory at or above the working directory
// that has go.mod: the repository's root for any test of the module. It
// fails t when there is none.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	root := moduleRoot()
	if root == "" {
		t.Fatal("no go.mod at or above the test's working directory")
	}
	return root
}

// moduleRoot is ModuleRoot without a test: "" when there is none.
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// fromStackEnv reads KEY=value lines (an optional "export " prefix) from
// .stack/env in the module root.
func fromStackEnv(key string) string {
	dir := moduleRoot()
	if dir == "" {
		return ""
	}
	f, err := os.Open(filepath.Join(dir, ".stack", "env"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export ")
		k, v, ok := strings.Cut(line, "=")
		if ok && k == key {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}
