package loadgen

import (
	"testing"
	"time"
)

// TestWorkedExample is seed 002's worked example: 60 SendMessage per minute
// per caller, burst 10, 30 calls at once: 10 admitted, 20 rejected with
// RetryInfo delays 1..20 s, and callers that wait the delay (plus under a
// second of jitter) are all admitted on their first retry.
func TestWorkedExample(t *testing.T) {
	b := newBucket(Limit{RatePerMin: 60, Burst: 10})
	admitted := 0
	var delays []int
	for i := 0; i < 30; i++ {
		ok, d := b.take(0)
		if ok {
			admitted++
			continue
		}
		delays = append(delays, d)
	}
	if admitted != 10 || len(delays) != 20 {
		t.Fatalf("admitted %d, rejected %d; want 10, 20", admitted, len(delays))
	}
	for i, d := range delays {
		if d != i+1 {
			t.Fatalf("delay[%d] = %d s; want %d s (all: %v)", i, d, i+1, delays)
		}
	}
	for i, d := range delays {
		jitter := time.Duration(i*37%100) * 9 * time.Millisecond // 0..0.9 s
		if ok, d2 := b.take(time.Duration(d)*time.Second + jitter); !ok {
			t.Fatalf("retry %d at %ds+%v rejected again (delay %d)", i, d, jitter, d2)
		}
	}
}

func TestBucketRefillAndReset(t *testing.T) {
	b := newBucket(Limit{RatePerMin: 120, Burst: 2}) // 2 tokens/s
	for i := 0; i < 2; i++ {
		if ok, _ := b.take(0); !ok {
			t.Fatalf("call %d rejected; want admitted from burst", i)
		}
	}
	if ok, d := b.take(0); ok || d != 1 {
		t.Fatalf("third call: ok=%v delay=%d; want rejected, 1 s (0.5 s rounded up)", ok, d)
	}
	// Long after, the bucket is full again and old promises are forgotten.
	for i := 0; i < 2; i++ {
		if ok, _ := b.take(time.Minute); !ok {
			t.Fatalf("call %d after a minute rejected", i)
		}
	}
	if ok, d := b.take(time.Minute); ok || d != 1 {
		t.Fatalf("after refill: ok=%v delay=%d; want rejected, 1 s", ok, d)
	}
	// No limit admits everything.
	u := newBucket(Limit{})
	for i := 0; i < 1000; i++ {
		if ok, _ := u.take(0); !ok {
			t.Fatal("unlimited bucket rejected a call")
		}
	}
}

func TestBucketSetLimit(t *testing.T) {
	b := newBucket(Limit{RatePerMin: 600, Burst: 50})
	b.setLimit(Limit{RatePerMin: 6, Burst: 2})
	n := 0
	for i := 0; i < 10; i++ {
		if ok, _ := b.take(0); ok {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("after lowering the limit %d calls admitted; want burst 2", n)
	}
	if _, d := b.take(0); d < 10 {
		t.Fatalf("delay %d s at 6/min; want >= 10 s", d)
	}
}
