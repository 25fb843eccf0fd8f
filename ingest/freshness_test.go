package ingest_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/errtrail/errtrail/ingest"
	"github.com/segmentio/kafka-go"
)

// TestMeasureFreshness is a measurement, not a check: it runs only with
// ERRTRAIL_MEASURE=1 (see docs/ingest.md). With the default batch limits
// and background load at ERRTRAIL_MEASURE_RATE events/s (default 20,000)
// for ERRTRAIL_MEASURE_SECONDS (default 60), it sends a probe event every
// 100 ms and reports how long each took from produce to visible in errors.
func TestMeasureFreshness(t *testing.T) {
	if os.Getenv("ERRTRAIL_MEASURE") != "1" {
		t.Skip("measurement: set ERRTRAIL_MEASURE=1 to run")
	}
	rate, _ := strconv.Atoi(os.Getenv("ERRTRAIL_MEASURE_RATE"))
	if rate <= 0 {
		rate = 20000
	}
	secs, _ := strconv.Atoi(os.Getenv("ERRTRAIL_MEASURE_SECONDS"))
	if secs <= 0 {
		secs = 60
	}
	s := newStack(t, 4)
	cfg := s.config(testLogger(t), ingest.NewMetrics(nil))
	cfg.Limits = ingest.Limits{} // production defaults: 50k rows, 64 MiB, 1 s
	run := s.start(t, cfg)
	defer run.stop(t)
	s.produce(t, goodEvents("warmup", 0, 100))
	s.waitFor(t, 2*time.Minute, "warm-up rows", func(c counts) bool { return c.errors >= 100 })

	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
	defer cancel()
	w := &kafka.Writer{Addr: kafka.TCP(s.brokers...), Topic: s.topic, Balancer: &kafka.RoundRobin{},
		BatchSize: 1000, BatchTimeout: 5 * time.Millisecond, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // background load, paced in 50 ms steps
		defer wg.Done()
		per := rate / 20
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ctx.Err() == nil; i++ {
			_ = w.WriteMessages(ctx, goodEvents("load", i*per, per)...)
			<-tick.C
		}
	}()

	var mu sync.Mutex
	sent := map[string]time.Time{}
	var lat []time.Duration
	wg.Add(1)
	go func() { // probes
		defer wg.Done()
		pw := &kafka.Writer{Addr: kafka.TCP(s.brokers...), Topic: s.topic, Balancer: &kafka.RoundRobin{},
			BatchSize: 1, RequiredAcks: kafka.RequireAll}
		defer pw.Close()
		for i := 0; ctx.Err() == nil; i++ {
			m := goodEvents("probe", i, 1)[0]
			id := fmt.Sprintf("probe-%d", i)
			mu.Lock()
			sent[id] = time.Now()
			mu.Unlock()
			_ = pw.WriteMessages(ctx, m)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-poll.C:
		}
		mu.Lock()
		ids := make([]string, 0, len(sent))
		for id := range sent {
			ids = append(ids, "'"+id+"'")
		}
		mu.Unlock()
		if len(ids) == 0 {
			continue
		}
		rows, err := s.conn.Query(context.Background(), "SELECT event_id FROM "+s.sopt.Database+".errors WHERE event_id IN ("+strings.Join(ids, ",")+")")
		if err != nil {
			continue
		}
		now := time.Now()
		for rows.Next() {
			var id string
			rows.Scan(&id)
			mu.Lock()
			if t0, ok := sent[id]; ok {
				lat = append(lat, now.Sub(t0))
				delete(sent, id)
			}
			mu.Unlock()
		}
		rows.Close()
	}
	wg.Wait()
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(int(p*float64(len(lat))), len(lat)-1)] }
	if len(lat) == 0 {
		t.Fatal("no probe became visible")
	}
	c, _ := s.counts(t)
	t.Logf("load %d events/s for %d s; %d probes visible (%d not yet); produce→visible p50 %v p95 %v p99 %v max %v; stored %s",
		rate, secs, len(lat), len(sent), q(0.50).Round(time.Millisecond), q(0.95).Round(time.Millisecond),
		q(0.99).Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond), c)
}
