package kafkapub

import (
	"sync"
	"sync/atomic"
)

// testMetrics is a Metrics for the tests (a counter, not Prometheus: the
// Prometheus adapter is tested in emit/emitprom).
type testMetrics struct {
	queued, sent atomic.Int64
	mu           sync.Mutex
	drops        map[string]int64
	queue        func() int
}

func newTestMetrics() *testMetrics { return &testMetrics{drops: map[string]int64{}} }

func (m *testMetrics) AddQueued(n int) { m.queued.Add(int64(n)) }
func (m *testMetrics) AddSent(n int)   { m.sent.Add(int64(n)) }
func (m *testMetrics) AddDropped(reason string, n int) {
	m.mu.Lock()
	m.drops[reason] += int64(n)
	m.mu.Unlock()
}
func (m *testMetrics) SetQueueLength(f func() int) { m.queue = f }

func (m *testMetrics) dropped(reason string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.drops[reason]
}
