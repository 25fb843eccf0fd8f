package main

import (
	"io"
	"testing"
	"time"
)

// TestGroupTimingDefaults: a replacement for a crashed member waits for the
// dead member's session to expire, so the default session timeout is what
// keeps takeover within the 10 s goal (TestFaultSIGKILL measures it); it
// must not be below what brokers accept by default, and heartbeats must come
// at least three times per session.
func TestGroupTimingDefaults(t *testing.T) {
	t.Setenv("ERRTRAIL_KAFKA_SESSION_TIMEOUT", "")
	fs, o := newFlags("run", io.Discard)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	const (
		brokerMin = 6 * time.Second  // group.min.session.timeout.ms default
		goal      = 10 * time.Second // replacement consumes within this of starting
		join      = time.Second      // join, sync, first fetch and batch (measured ≈ 0.3 s)
	)
	if s := *o.sessionTimeout; s < brokerMin || s+join > goal {
		t.Errorf("default session timeout %s: want at least %s (broker minimum) and at most %s (takeover goal)", s, brokerMin, goal-join)
	}
	for _, s := range []time.Duration{*o.sessionTimeout, brokerMin, 10 * time.Second, 30 * time.Second, 45 * time.Second} {
		if hb := heartbeatInterval(s); hb <= 0 || hb > s/3 {
			t.Errorf("session %s: heartbeat every %s; want at most a third of it", s, hb)
		}
	}
	if hb := heartbeatInterval(*o.sessionTimeout); hb != time.Second {
		t.Errorf("default heartbeat interval %s; want 1s (docs/ingest.md)", hb)
	}
}
