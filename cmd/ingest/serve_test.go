package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/stackload"
	"github.com/errtrail/errtrail/internal/testenv"
)

// TestReadyzWhilePipelineStarts runs `ingest run` on the real stack and asks
// /readyz from the moment the HTTP server is up until the pipeline consumes.
//
// The story: the server starts before the pipeline exists, and run used to
// assign the pipeline to a plain variable that the /readyz handler read on
// the server's goroutines, with nothing ordering the two. Under -race this
// test reported that; without it, a handler could see a half-published
// pipeline. The answers must be "starting" (503) before the pipeline
// exists, never anything but 503 or 200 meanwhile, and "ready" (200) once
// it runs.
func TestReadyzWhilePipelineStarts(t *testing.T) {
	chAddr := strings.Split(testenv.ClickHouse(t), ",")[0]
	brokers, topic := stackload.NewTopic(t, "errtrail.cmdingest.readyz.")
	id := time.Now().UnixNano()
	db := fmt.Sprintf("errtrail_cmdingest_%d", id)
	conn := stackload.Open(t, chAddr)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+db); err != nil {
			t.Logf("drop database %s: %v", db, err)
		}
	})

	client := &http.Client{Timeout: 30 * time.Second} // a hang guard: a busy machine has stalled for 6 s
	type answer struct {
		code int
		body string
	}
	ask := func(addr string) answer {
		resp, err := client.Get("http://" + addr + "/readyz")
		if err != nil {
			return answer{body: err.Error()}
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return answer{resp.StatusCode, string(b)}
	}

	// The hook runs on run's goroutine after the server is up and before
	// the pipeline is built, so its answer is the one of "before".
	before := make(chan answer, 1)
	addrs := make(chan string, 1)
	testHookServing = func(a net.Addr) {
		before <- ask(a.String())
		addrs <- a.String()
	}
	t.Cleanup(func() { testHookServing = nil })

	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() {
		exit <- runIngest(ctx, []string{
			"--kafka.brokers", strings.Join(brokers, ","), "--kafka.topic", topic,
			"--kafka.group", fmt.Sprintf("errtrail-cmdingest-readyz-%d", id),
			"--clickhouse.addr", chAddr, "--clickhouse.database", db,
			"--http.listen-address", "127.0.0.1:0",
			"--redact.key-file", filepath.Join(t.TempDir(), "redact.key"),
			"--shutdown.timeout", "10s",
			// the test binary keeps Go's own GC settings
			"--gc.percent", "100", "--memory.limit-mib", "0",
		}, &logs)
	}()

	var addr string
	select {
	case addr = <-addrs:
	case code := <-exit:
		t.Fatalf("run exited %d before serving HTTP; log:\n%s", code, logs.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("HTTP server not up within 2 minutes; log:\n%s", logs.String())
	}
	if a := <-before; a.code != http.StatusServiceUnavailable || a.body != "not ready: starting\n" {
		t.Errorf("/readyz before the pipeline exists: %d %q; want 503 \"not ready: starting\"", a.code, a.body)
	}

	// Ask without pause while run builds and starts the pipeline.
	deadline := time.Now().Add(time.Minute)
	var last answer
	asked := 0
	for time.Now().Before(deadline) {
		last = ask(addr)
		asked++
		if last.code == http.StatusOK {
			break
		}
		if last.code != http.StatusServiceUnavailable || !strings.HasPrefix(last.body, "not ready: ") {
			t.Fatalf("/readyz while starting: %d %q; want 503 or 200", last.code, last.body)
		}
	}
	if last.code != http.StatusOK || last.body != "ready\n" {
		t.Fatalf("/readyz after %d answers: %d %q; want 200 \"ready\"; log:\n%s", asked, last.code, last.body, logs.String())
	}

	// Stop only once the first retention run ended (see retentionRan).
	deadline = time.Now().Add(time.Minute)
	for !retentionRan(client, addr) {
		if time.Now().After(deadline) {
			t.Fatalf("no retention run within a minute; log:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("run exited %d after its context ended; want 0; log:\n%s", code, logs.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("run did not stop within a minute of its context ending; log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "ingest stopped cleanly") {
		t.Errorf("log lacks the clean stop:\n%s", logs.String())
	}
}

// retentionRan reports whether /metrics counts a finished retention run
// (errtrail_ingest_retention_runs_total, docs/ingest.md), ok or failed.
//
// Why the test waits for it: clickhouse-go answers a cancelled query by
// writing a cancel packet from the query's goroutine while its reading
// goroutine sets the connection's deadline, and chdial's conn keeps that
// deadline in a plain field, which -race reports.
func retentionRan(client *http.Client, addr string) bool {
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "errtrail_ingest_retention_runs_total{") && !strings.HasSuffix(line, " 0") {
			return true
		}
	}
	return false
}

// syncBuffer collects the log lines that run writes from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}
