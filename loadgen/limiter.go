package loadgen

import (
	"math"
	"time"
)

// bucket is the simulated limiter of one agent for one caller: a token
// bucket that refills at rate tokens per second up to burst, and that tells
// each rejected call the time until a token is free *for it*.
//
// Seed 002's worked example fixes the semantics: 30 calls at once against 60
// per minute with burst 10 admit 10 and reject 20 with delays 1..20 s, "the
// time until the next token, one second per token", so that callers that
// obey the delays are all admitted on their first retry. A bucket that gave
// every rejected call the same "time until one token" (1 s) would send all 20
// back at once. So the bucket remembers the last slot it promised (next) and
// promises each further rejection the slot after it. Promises are not
// reservations: a call that arrives at a promised slot competes with any
// other call for the token, as in a real limiter.
type bucket struct {
	rate   float64       // tokens per second
	burst  float64       // capacity
	tokens float64       // tokens at time last
	last   time.Duration // scenario time of the last update
	next   time.Duration // the latest slot promised to a rejected call
	policy string
}

func newBucket(l Limit) *bucket {
	return &bucket{rate: l.RatePerMin / 60, burst: l.Burst, tokens: l.Burst, policy: l.Policy}
}

// setLimit changes the policy (a limit fault) keeping the stored tokens
// within the new burst.
func (b *bucket) setLimit(l Limit) {
	b.rate, b.burst, b.policy = l.RatePerMin/60, l.Burst, l.Policy
	b.tokens = math.Min(b.tokens, b.burst)
}

// take asks for one token at scenario time now. It returns whether the call
// is admitted and, when not, the delay in whole seconds (rounded up, never
// zero) until the slot promised to this call.
func (b *bucket) take(now time.Duration) (ok bool, delay int) {
	if b.rate <= 0 {
		return true, 0
	}
	if now > b.last {
		b.tokens = math.Min(b.burst, b.tokens+(now-b.last).Seconds()*b.rate)
		b.last = now
	}
	if b.tokens >= 1-1e-9 {
		b.tokens--
		return true, 0
	}
	perToken := time.Duration(float64(time.Second) / b.rate)
	slot := now + time.Duration((1-b.tokens)/b.rate*float64(time.Second))
	if b.next > now && b.next+perToken > slot {
		slot = b.next + perToken
	}
	b.next = slot
	d := int(math.Ceil((slot - now).Seconds() - 1e-6))
	if d < 1 {
		d = 1
	}
	return false, d
}
