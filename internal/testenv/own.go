package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// OwnStack is a stack of one test's own: servers that scripts/stack starts
// in a folder of the test's own, on free ports, with the same generated
// configuration as the shared stack. A fault test pauses, stops, kills or
// restarts these (OwnStack.Stack) instead of the shared ones, so the other
// tests, of its package and of the packages scripts/test runs at the same
// time, keep their servers meanwhile. Services it was not asked for are the
// shared stack's: Kafka, ClickHouse and ClickHouseHTTP return the shared
// address for those (and a nil *OwnStack returns the shared addresses for
// all), so a test can take its servers from an OwnStack either way.
type OwnStack struct {
	dir                     string
	env                     []string
	kafka, ch, chHTTP       string
	hasKafka, hasClickHouse bool
}

// ownPortKeys are scripts/stack's port settings. Every one is set for an own
// stack, so none comes from the environment (the shared stack's) or defaults
// to a port of the shared stack.
var ownPortKeys = []string{"ERRTRAIL_KAFKA_PORT", "ERRTRAIL_KAFKA_CONTROLLER_PORT",
	"ERRTRAIL_CLICKHOUSE_PORT", "ERRTRAIL_CLICKHOUSE_HTTP_PORT", "ERRTRAIL_CLICKHOUSE_INTERSERVER_PORT",
	"ERRTRAIL_PROMETHEUS_PORT", "ERRTRAIL_ALERTMANAGER_PORT",
	"ERRTRAIL_INGEST_METRICS_PORT", "ERRTRAIL_ALERTER_METRICS_PORT"}

// Own starts the services ("kafka", "clickhouse") on a stack of the test's
// own and stops them (scripts/stack down) when the test ends. Like the
// shared servers it stops the test when the shared stack is not up: it
// fails in CI and skips elsewhere (the own servers are the same installed
// binaries).
func Own(t testing.TB, services ...string) *OwnStack {
	t.Helper()
	// The shared stack up means the binaries and the Kafka jars are there.
	Kafka(t)
	ClickHouse(t)
	root := moduleRoot()
	if root == "" {
		t.Fatal("testenv.Own: no go.mod in the working directory or above it")
	}
	var lastErr error
	for attempt := 1; attempt <= 3; attempt++ {
		s, err := startOwn(t, root, services)
		if err == nil {
			return s
		}
		// A port drawn free can be taken by another process before the
		// server binds it: draw again.
		lastErr = err
		t.Logf("own stack, attempt %d: %v", attempt, err)
	}
	t.Fatalf("testenv.Own(%s): %v", strings.Join(services, ", "), lastErr)
	return nil
}

func startOwn(t testing.TB, root string, services []string) (*OwnStack, error) {
	t.Helper()
	dir, err := os.MkdirTemp("", "errtrail-own-stack-")
	if err != nil {
		return nil, err
	}
	s := &OwnStack{dir: dir}
	ports := map[string]int{}
	for _, k := range ownPortKeys {
		if ports[k], err = drawPort(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "ERRTRAIL_STACK_DIR" || ports[k] != 0 {
			continue
		}
		s.env = append(s.env, kv)
	}
	s.env = append(s.env, "ERRTRAIL_STACK_DIR="+dir)
	for _, k := range ownPortKeys {
		s.env = append(s.env, k+"="+strconv.Itoa(ports[k]))
	}
	down := func() {
		if out, err := s.run(root, "down"); err != nil {
			t.Logf("own stack %s: scripts/stack down: %v\n%s", dir, err, out)
		}
	}
	for _, svc := range services {
		switch svc {
		case "kafka":
			s.hasKafka = true
			s.kafka = "127.0.0.1:" + strconv.Itoa(ports["ERRTRAIL_KAFKA_PORT"])
		case "clickhouse":
			s.hasClickHouse = true
			s.ch = "127.0.0.1:" + strconv.Itoa(ports["ERRTRAIL_CLICKHOUSE_PORT"])
			s.chHTTP = "127.0.0.1:" + strconv.Itoa(ports["ERRTRAIL_CLICKHOUSE_HTTP_PORT"])
		default:
			os.RemoveAll(dir)
			t.Fatalf("testenv.Own: unknown service %q (kafka, clickhouse)", svc)
		}
		start := time.Now()
		if out, err := s.run(root, "start-"+svc); err != nil {
			down()
			os.RemoveAll(dir)
			return nil, fmt.Errorf("scripts/stack start-%s: %v\n%s", svc, err, out)
		}
		t.Logf("own %s on %s (%s; stack folder %s)", svc, s.addrOf(svc), time.Since(start).Round(time.Millisecond), dir)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if out, err := s.run(root, "logs", "all", "30"); err == nil {
				t.Logf("own stack %s, last lines of its logs:\n%s", dir, out)
			}
		}
		down()
		if os.Getenv("ERRTRAIL_KEEP_TEST_DATA") != "" {
			t.Logf("kept own stack folder %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	return s, nil
}

func (s *OwnStack) addrOf(svc string) string {
	if svc == "kafka" {
		return s.kafka
	}
	return s.ch
}

func (s *OwnStack) run(root string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(root, "scripts", "stack"), args...)
	cmd.Dir = root
	cmd.Env = s.env
	return cmd.CombinedOutput()
}

// Kafka returns the own broker, or the shared one when the stack has no
// Kafka of its own.
func (s *OwnStack) Kafka(t testing.TB) string {
	t.Helper()
	if s == nil || !s.hasKafka {
		return Kafka(t)
	}
	return s.kafka
}

// ClickHouse returns the native-protocol address of the own ClickHouse, or
// of the shared one when the stack has no ClickHouse of its own.
func (s *OwnStack) ClickHouse(t testing.TB) string {
	t.Helper()
	if s == nil || !s.hasClickHouse {
		return ClickHouse(t)
	}
	return s.ch
}

// ClickHouseHTTP returns host:port of the own ClickHouse's HTTP interface,
// or of the shared one's.
func (s *OwnStack) ClickHouseHTTP(t testing.TB) string {
	t.Helper()
	if s == nil || !s.hasClickHouse {
		return ClickHouseHTTP(t)
	}
	return s.chHTTP
}

// Stack runs scripts/stack with args on the own stack, for example
// s.Stack(t, "pause-clickhouse"), logs its output and fails the test when it
// fails.
func (s *OwnStack) Stack(t testing.TB, args ...string) {
	t.Helper()
	root := moduleRoot()
	start := time.Now()
	out, err := s.run(root, args...)
	t.Logf("scripts/stack %s on the own stack (%s):\n%s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("scripts/stack %s (own stack %s): %v", strings.Join(args, " "), s.dir, err)
	}
}

// Dir is the own stack's folder (scripts/stack's ERRTRAIL_STACK_DIR): its
// ClickHouse's users.xml is Dir()/clickhouse/users.xml, which the server
// re-reads a few seconds after it changes.
func (s *OwnStack) Dir() string { return s.dir }
