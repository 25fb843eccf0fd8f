package kafkapub

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/emit"
	"github.com/errtrail/errtrail/emit/internal/emittest"
	"github.com/errtrail/errtrail/internal/testenv"
)

// closedPort returns host:port where nothing listens: a port drawn for this
// process, which no other test binds (a port found by closing a listener
// on port 0 can be another process's next listener).
func closedPort(t *testing.T) string { return testenv.FreeAddr(t) }

// blackhole is a broker that accepts connections and never answers: a
// Kafka that hangs, on which a write blocks until its deadline.
func blackhole(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 1024)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for len(conns) > 0 {
			(<-conns).Close()
		}
	})
	return l.Addr().String()
}

func dropped(m *testMetrics, reason string) int { return int(m.dropped(reason)) }

// TestPublisherQueueFullDeadBroker (no Kafka: a broker that hangs): Publish
// returns at once whatever Kafka does; past the queue, events are dropped
// and counted; Close gives up at its deadline and counts the rest.
func TestPublisherQueueFullDeadBroker(t *testing.T) {
	m := newTestMetrics()
	// A write that would block for a day: Close can only return because it
	// honours its context's deadline (go test's timeout catches a hang).
	p, err := New(Config{Brokers: []string{blackhole(t)}, QueueSize: 4, BatchSize: 2, Metrics: m, WriteTimeout: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ev := &emit.Event{ObservedAt: time.Now(), Reply: emit.Reply{HTTPStatus: 503, Body: []byte(`{"error":{"code":503}}`)}}
	accepted := 0
	for i := 0; i < 1000; i++ {
		if p.Publish(ev) {
			accepted++
		}
	}
	if full := dropped(m, DropQueueFull); full != 1000-accepted || accepted > 4+2 {
		t.Fatalf("accepted %d, queue_full %d", accepted, full)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v", err)
	}
	if p.Publish(ev) || dropped(m, DropClosed)+dropped(m, DropKafkaError) != accepted+1 {
		t.Fatalf("after Close: closed %d kafka %d of %d", dropped(m, DropClosed), dropped(m, DropKafkaError), accepted+1)
	}
	if s := float64(m.sent.Load()); s != 0 {
		t.Fatalf("sent %v to a dead broker", s)
	}
}

// TestKafkaDownRepliesUnchanged: with the publisher blocked on a dead
// broker and its queue full, the agent's replies are byte-identical to the
// unwrapped handler's, every one completes while the publisher is still
// stuck on its first batch, and the drop counter says how many events were
// lost.
func TestKafkaDownRepliesUnchanged(t *testing.T) {
	m := newTestMetrics()
	p, err := New(Config{Brokers: []string{blackhole(t)}, QueueSize: 2, BatchSize: 1, Metrics: m, WriteTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	h := emittest.RateLimiter(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	plain, wrapped := httptest.NewServer(h), httptest.NewServer(emit.Handler(h, p, emit.Config{}))
	defer plain.Close()
	defer wrapped.Close()
	c := emittest.NewWire()
	const n = 20
	for i := 0; i < n; i++ {
		var got [2][]byte
		for j, u := range []string{plain.URL, wrapped.URL} {
			req, _ := http.NewRequest("POST", u, strings.NewReader(`{"jsonrpc":"2.0","id":"req-41","method":"SendMessage"}`))
			req.Header.Set("X-Caller", "orchestrator-7")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
			got[j] = emittest.WithoutDate(c.Last())
		}
		if !bytes.Equal(got[0], got[1]) {
			t.Fatalf("reply %d differs:\n%q\n%q", i, got[0], got[1])
		}
	}
	if s := float64(m.sent.Load()); s != 0 || dropped(m, DropKafkaError) != 0 {
		t.Fatalf("the publisher finished a batch (sent %v) before the replies: the test proves nothing", s)
	}
	queued := int(float64(m.queued.Load()))
	if full := dropped(m, DropQueueFull); full+queued != n || full < n-3 {
		t.Fatalf("queued %d + queue_full %d != %d", queued, full, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	p.Close(ctx)
	lost := dropped(m, DropQueueFull) + dropped(m, DropClosed) + dropped(m, DropKafkaError)
	if lost != n {
		t.Fatalf("drop counters say %d lost of %d", lost, n)
	}
	t.Logf("%d replies unchanged; %d events lost (queue_full %d, closed %d, kafka_error %d)", n, lost,
		dropped(m, DropQueueFull), dropped(m, DropClosed), dropped(m, DropKafkaError))
}

// TestPublisherKafkaRefused (no Kafka: a closed port): a batch Kafka
// cannot take is dropped and counted as kafka_error, not retried forever.
func TestPublisherKafkaRefused(t *testing.T) {
	m := newTestMetrics()
	p, err := New(Config{Brokers: []string{closedPort(t)}, Metrics: m, Linger: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ev := &emit.Event{ObservedAt: time.Now(), Reply: emit.Reply{HTTPStatus: 500}}
	for i := 0; i < 3; i++ {
		p.Publish(ev)
	}
	deadline := time.Now().Add(20 * time.Second)
	for dropped(m, DropKafkaError) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := dropped(m, DropKafkaError); n != 3 {
		t.Fatalf("kafka_error %d of 3", n)
	}
	p.Close(context.Background())
}

// TestPublisherCloseFlushes (real Kafka): Close sends everything queued
// within its deadline, and Kafka holds every event.
func TestPublisherCloseFlushes(t *testing.T) {
	brokers, topic := emittest.KafkaTopic(t)
	m := newTestMetrics()
	p, err := New(Config{Brokers: brokers, Topic: topic, Metrics: m, Linger: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	o := emit.NewObserver(p, emit.Source{Kind: emit.KindGateway, ID: "gw-1"})
	for i := 0; i < 300; i++ {
		o.Publish(&emit.Event{Reply: emit.Reply{HTTPStatus: 500, Body: []byte(`{"error":{"code":500,"status":"INTERNAL","message":"x"}}`)}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s := float64(m.sent.Load()); s != 300 {
		t.Fatalf("sent %v of 300", s)
	}
	evs := emittest.ReadEvents(t, brokers, topic, 300)
	ids := map[string]bool{}
	for _, ev := range evs {
		emittest.ValidEvent(t, ev)
		ids[emittest.ParseEventContext(t, ev).EventID] = true
	}
	if len(ids) != 300 {
		t.Fatalf("%d distinct event ids of 300", len(ids))
	}
}
