package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// startedWriter collects what run writes to stderr and calls started once
// the tap logs that it listens.
type startedWriter struct {
	mu      sync.Mutex
	b       strings.Builder
	started func()
}

func (w *startedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if w.started != nil && strings.Contains(w.b.String(), "listening") {
		w.started()
		w.started = nil
	}
	return len(p), nil
}

func (w *startedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestTapRefusesMissingTopic (real Kafka): with a --kafka.topic the brokers
// do not have, the tap does not start (exit 2, the topic named); with an
// existing topic it starts, and with Kafka unreachable it starts too (an
// outage is not a setting to fix: it proxies and counts the drops).
func TestTapRefusesMissingTopic(t *testing.T) {
	brokers, topic := kafkaTopic(t)
	args := func(brokers, topic string) []string {
		return []string{"--upstream", "http://127.0.0.1:1", "--http.listen-address", "127.0.0.1:0",
			"--metrics.listen-address", "127.0.0.1:0", "--kafka.brokers", brokers, "--kafka.topic", topic,
			"--agent", "research-agent", "--log.level", "info"}
	}
	missing := fmt.Sprintf("errtrail.tap-test.typo.%d", time.Now().UnixNano())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := startedWriter{started: cancel} // were it to start, it would stop at once
	if code := run(ctx, args(strings.Join(brokers, ","), missing), &out); code != 2 {
		t.Fatalf("missing topic: exit %d, want 2; stderr:\n%s", code, out.String())
	}
	if s := out.String(); !strings.Contains(s, missing) || !strings.Contains(s, "does not exist") || strings.Contains(s, "listening") {
		t.Fatalf("missing topic: stderr does not name the topic, or the tap started:\n%s", s)
	}

	for _, c := range []struct{ name, brokers string }{
		{"existing topic", strings.Join(brokers, ",")},
		{"Kafka unreachable", closedPort(t)},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		w := &startedWriter{started: cancel} // stop as soon as it serves
		code := run(ctx, args(c.brokers, topic), w)
		cancel()
		if code != 0 || !strings.Contains(w.String(), "listening") {
			t.Fatalf("%s: exit %d, want 0 after serving; stderr:\n%s", c.name, code, w.String())
		}
	}
}
