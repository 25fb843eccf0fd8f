package ingest_test

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/segmentio/kafka-go"
)

// TestRebalanceAbandonsBatchesItCannotStore: the first consumer's
// ClickHouse stops answering (its connection goes through a proxy that
// stops forwarding) while it holds fetched batches, and a second consumer
// joins. The first cannot store its batches within its drain timeout, so it
// abandons them: its insert attempt is cancelled, nothing of them is
// committed, and the partitions' next owner stores them. After the first
// consumer's ClickHouse answers again, every event is stored once, in
// errors and in the rollups, and the first consumer counted abandoned
// messages. Without the fence the frozen batch would be written after its
// partitions moved, and the rollups would count it twice.
func TestRebalanceAbandonsBatchesItCannotStore(t *testing.T) {
	skipShort(t)
	s := newStack(t, 4)
	px := newFreezeProxy(t, s.chAddr)
	connA, err := clickhouse.Open(&clickhouse.Options{
		Addr: []string{px.addr()}, Protocol: clickhouse.Native,
		Compression: &clickhouse.Compression{Method: clickhouse.CompressionLZ4},
		DialTimeout: testenv.CHDialTimeout, ReadTimeout: 60 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer connA.Close()

	const first, second = 3000, 6000
	ma, mb := ingest.NewMetrics(nil), ingest.NewMetrics(nil)
	cfgA := s.config(testLogger(t), ma)
	cfgA.InsertTimeout = 60 * time.Second // longer than the drain: only the abandonment ends the frozen attempt
	a := s.startOn(t, cfgA, s.readerDrain(t, 2*time.Second, s.topic), connA)
	s.produce(t, goodEvents("abandon", 0, first))
	s.waitFor(t, 2*time.Minute, "the first events stored", func(c counts) bool { return c.errorIDs >= first })

	px.freeze()
	thawed := false
	defer func() {
		if !thawed {
			px.thaw()
		}
	}()
	s.produce(t, goodEvents("abandon", first, second))
	waitUntil(t, time.Minute, "the first consumer to fetch the new events", func() bool {
		return value(ma.Consumed) >= first+second/2
	})
	b := s.start(t, s.config(testLogger(t), mb))
	waitUntil(t, 2*time.Minute, "the first consumer to abandon its batches", func() bool { return value(ma.Abandoned) > 0 })
	waitUntil(t, 2*time.Minute, "the second consumer to store rows", func() bool { return value(mb.RowsInserted) > 0 })
	px.thaw()
	thawed = true
	s.waitFor(t, 4*time.Minute, "all events stored", func(c counts) bool { return c.errorIDs >= first+second })
	if err := a.stop(t); err != nil {
		t.Fatal(err)
	}
	if err := b.stop(t); err != nil {
		t.Fatal(err)
	}
	s.checkOnce(t, first+second, 0)
	c, err := s.counts(t)
	if err != nil {
		t.Fatal(err)
	}
	if c.landed != first+second {
		t.Errorf("the rollups count %d events; want %d (more: an abandoned batch was written after its partitions moved)", c.landed, first+second)
	}
	t.Logf("abandoned by the first consumer: %v messages; rows first %v, second %v",
		value(ma.Abandoned), value(ma.RowsInserted), value(mb.RowsInserted))
}

// freezeProxy forwards TCP connections to a server and can stop forwarding
// (freeze): bytes are then held, neither sent nor refused, as by a server
// that hangs.
type freezeProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	frozen bool
	cond   *sync.Cond
}

func newFreezeProxy(t *testing.T, target string) *freezeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezeProxy{ln: ln, target: target}
	p.cond = sync.NewCond(&p.mu)
	go p.serve()
	t.Cleanup(func() { p.thaw(); ln.Close() })
	return p
}

func (p *freezeProxy) addr() string { return p.ln.Addr().String() }

func (p *freezeProxy) freeze() { p.mu.Lock(); p.frozen = true; p.mu.Unlock() }

func (p *freezeProxy) thaw() { p.mu.Lock(); p.frozen = false; p.cond.Broadcast(); p.mu.Unlock() }

func (p *freezeProxy) gate() {
	p.mu.Lock()
	for p.frozen {
		p.cond.Wait()
	}
	p.mu.Unlock()
}

func (p *freezeProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			p.gate()
			u, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				return
			}
			go p.copy(u, c)
			p.copy(c, u)
		}()
	}
}

// copy moves bytes from src to dst, each read held while frozen, and closes
// both at the end.
func (p *freezeProxy) copy(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // io.EOF included: the other side closes
			return
		}
	}
}

// TestReadyOnlyInTheGroup: a pipeline whose consumer group cannot be joined
// (no broker listens where it points) runs but is not ready; one on the
// stack's Kafka becomes ready once it is in the group.
func TestReadyOnlyInTheGroup(t *testing.T) {
	skipShort(t)
	s := newStack(t, 2)
	away, err := ingest.NewGroup(ingest.GroupConfig{Reader: kafka.ReaderConfig{Brokers: []string{"127.0.0.1:1"},
		GroupID: s.group + "-away", Topic: s.topic, JoinGroupBackoff: 200 * time.Millisecond}, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.config(testLogger(t), ingest.NewMetrics(nil))
	cfg.LagInterval = -1
	run := s.startOn(t, cfg, away, s.conn)
	time.Sleep(3 * time.Second)
	if run.p.Ready() {
		t.Error("ready while the consumer group cannot be joined (no broker)")
	}
	if err := run.stop(t); err != nil {
		t.Fatal(err)
	}

	ok := s.start(t, s.config(testLogger(t), ingest.NewMetrics(nil)))
	waitUntil(t, time.Minute, "ready once in the group", ok.p.Ready)
	if err := ok.stop(t); err != nil {
		t.Fatal(err)
	}
}
