package ingest

import (
	"testing"
	"time"
)

func TestBackoffCappedAndJittered(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: 2 * time.Second}
	for _, tc := range []struct {
		attempt int
		rnd     float64
		want    time.Duration
	}{
		{0, 0, 50 * time.Millisecond},
		{0, 0.999999, 100 * time.Millisecond},
		{1, 0, 100 * time.Millisecond},
		{3, 0.5, 600 * time.Millisecond}, // d=800ms: 400 + 0.5*400
		{10, 0, time.Second},             // capped at 2s, half of it
		{1000, 0.999999, 2 * time.Second},
	} {
		got := b.Delay(tc.attempt, func() float64 { return tc.rnd })
		if d := got - tc.want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("Delay(%d, rnd=%v) = %v; want %v", tc.attempt, tc.rnd, got, tc.want)
		}
	}
	for i := 0; i < 1000; i++ {
		if d := b.Delay(i%40, nil); d < 50*time.Millisecond || d > 2*time.Second {
			t.Fatalf("Delay(%d) = %v outside [50ms, 2s]", i%40, d)
		}
	}
	if d := (Backoff{}).Delay(100, nil); d > 30*time.Second || d < 15*time.Second {
		t.Errorf("default cap: Delay(100) = %v; want within [15s, 30s]", d)
	}
}
