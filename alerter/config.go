package alerter

import (
	"flag"
	"fmt"
	"time"
)

// Config holds the windows and thresholds of every verdict. The defaults are
// explained, scenario by scenario, in docs/alerting.md.
type Config struct {
	// Bucket is the resolution of the counts: 1m reads the callers_1m rollup,
	// anything shorter reads the raw errors table (time-compressed tests).
	Bucket time.Duration
	// Window is the current (sliding) window: exactly the last Window
	// seconds, read from the raw errors table, so a fault's end leaves the
	// window Window after its last reply (not up to a bucket later).
	Window time.Duration
	// Baseline is the trailing history before the window that medians are
	// taken over: the whole buckets that end at or before the window's
	// start. Within the history errtrail has (History), a bucket with no
	// replies counts as zero; before it, buckets are unknown and left out.
	Baseline time.Duration

	History HistoryConfig

	Overload    OverloadConfig
	Runaway     RunawayConfig
	LimitTooLow LimitTooLowConfig
	Retry       RetryConfig
	Gateway     GatewayConfig
	Untyped     UntypedConfig

	// TopK bounds the per-caller series: at most TopK flagged callers (by
	// score) are exported in all; the per-agent counts include every one.
	TopK int
	// TopLimits bounds the limit label per agent; the rest is "other".
	TopLimits int
	// TopAgents bounds the agent label of the per-agent families: agents with
	// a verdict are always exported, then the busiest; the rest are summed
	// into agent="other" (rates) and counted in agents_capped.
	TopAgents int
}

// HistoryConfig says how much history a baseline needs before a verdict
// that compares a caller with its own past may be claimed.
type HistoryConfig struct {
	// Min is the known baseline (from the first bucket errtrail has data
	// for, within Baseline) that own-baseline verdicts need. With less, a
	// caller is judged only against its peers on the same agent in the same
	// window, and "limit too low" is not claimed (docs/alerting.md,
	// "History").
	Min time.Duration
	// MinPeers is how many other callers of the agent with errors in the
	// window a peer comparison needs; with fewer, nothing is claimed.
	MinPeers int
}

// OverloadConfig defines "agent overloaded".
type OverloadConfig struct {
	Factor     float64 // fire: rate over Window >= Factor x baseline median rate
	MinPerSec  float64 // and >= this absolute rate
	MinCallers int     // and seen by >= min(MinCallers, active callers) callers in Window
	// Window is the short window the firing condition reads (<= Config.Window).
	Window time.Duration
	// ClearAfter: once overloaded, the verdict holds until the overload rate
	// over the last ClearAfter falls below MinPerSec/2 (hysteresis: a fault
	// that comes and goes with gaps shorter than ClearAfter stays one page).
	ClearAfter time.Duration
}

// RunawayConfig defines "runaway caller".
type RunawayConfig struct {
	Factor               float64 // caller's window rate >= Factor x its baseline median
	MinPerMin            float64 // and >= this absolute rate (errors per minute)
	MinBaseline          float64 // a median below this (per minute) counts as this
	RiseFactor           float64 // another caller "rose" when its own score >= RiseFactor
	RiseMinPerMin        float64 // ...and its window rate >= this (per minute)
	MaxOthersRisingShare float64 // runaway only while < this share of the other callers rose
}

// LimitTooLowConfig defines "limit too low".
type LimitTooLowConfig struct {
	RiseFactor float64 // a caller's quota rate >= RiseFactor x its baseline median
	MinPerMin  float64 // ...and >= this (quota rejections per minute)
	MinCallers int     // at least this many callers rose
	MinShare   float64 // and at least this share of the agent's callers
}

// RetryConfig defines "retry storm": ignored Retry-After or rotated ids.
type RetryConfig struct {
	Window          time.Duration // raw-row window the retry statistics cover
	MinEarly        int64         // early retries (sooner than the delay given) needed
	MinEarlyShare   float64       // of the retries that were given a delay
	MinRotated      int64         // retries with a fresh messageId/idempotency key needed
	MinRotatedShare float64       // of the retries carrying that id
	// RotationMargin: an id first seen less than this (plus the delay its
	// replies asked for) after the start of the rows looked at is not called
	// rotated: its first attempt may precede them.
	RotationMargin time.Duration
	// MaxDelay widens the rows looked at for the earlier attempts of the
	// retries in Window: a caller that honours a Retry-After of up to
	// MaxDelay is paired with its first attempt. Retries after a longer
	// delay are never called rotated (their first attempt cannot be seen).
	MaxDelay time.Duration
}

// GatewayConfig defines "gateway mangling".
type GatewayConfig struct {
	Window     time.Duration // raw-row window the agent/gateway pairs cover
	MinMangled int64         // mangled pairs needed
	MinShare   float64       // of all pairs seen by both an agent and a gateway
}

// UntypedConfig defines "untyped errors".
type UntypedConfig struct {
	MinCount int64   // replies of kind unknown in the window
	MinShare float64 // share of the agent's replies that are of kind unknown
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Bucket:   time.Minute,
		Window:   time.Minute,
		Baseline: time.Hour,
		History:  HistoryConfig{Min: 10 * time.Minute, MinPeers: 2},
		Overload: OverloadConfig{Factor: 5, MinPerSec: 0.2, MinCallers: 2,
			Window: 30 * time.Second, ClearAfter: 15 * time.Second},
		Runaway: RunawayConfig{Factor: 10, MinPerMin: 30, MinBaseline: 1,
			RiseFactor: 3, RiseMinPerMin: 5, MaxOthersRisingShare: 0.5},
		LimitTooLow: LimitTooLowConfig{RiseFactor: 3, MinPerMin: 5, MinCallers: 3, MinShare: 0.5},
		Retry: RetryConfig{Window: 5 * time.Minute, MinEarly: 10, MinEarlyShare: 0.5,
			MinRotated: 10, MinRotatedShare: 0.5, RotationMargin: time.Minute,
			MaxDelay: time.Hour},
		Gateway:   GatewayConfig{Window: 5 * time.Minute, MinMangled: 5, MinShare: 0.1},
		Untyped:   UntypedConfig{MinCount: 20, MinShare: 0.5},
		TopK:      20,
		TopLimits: 5,
		TopAgents: 200,
	}
}

// RegisterFlags binds c's fields to flags on fs, with c's values as defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&c.Bucket, "window.bucket", c.Bucket, "count resolution; 1m reads the callers_1m rollup, shorter reads raw errors (tests)")
	fs.DurationVar(&c.Window, "window.current", c.Window, "current sliding window")
	fs.DurationVar(&c.Baseline, "window.baseline", c.Baseline, "trailing baseline before the current window (medians)")
	fs.DurationVar(&c.History.Min, "history.min", c.History.Min, "known baseline needed before a caller is judged against its own past (else against its peers)")
	fs.IntVar(&c.History.MinPeers, "history.min-peers", c.History.MinPeers, "peers (other callers with errors in the window) a peer comparison needs")

	fs.Float64Var(&c.Overload.Factor, "overload.factor", c.Overload.Factor, "overloaded: overload rate >= factor x baseline median rate")
	fs.Float64Var(&c.Overload.MinPerSec, "overload.min-rate", c.Overload.MinPerSec, "overloaded: overload rate >= this (per second)")
	fs.IntVar(&c.Overload.MinCallers, "overload.min-callers", c.Overload.MinCallers, "overloaded: seen by >= min(this, active callers) callers")
	fs.DurationVar(&c.Overload.Window, "overload.window", c.Overload.Window, "overloaded: the short window the firing condition reads")
	fs.DurationVar(&c.Overload.ClearAfter, "overload.clear-after", c.Overload.ClearAfter, "overloaded: holds until the overload rate over this falls below min-rate/2")

	fs.Float64Var(&c.Runaway.Factor, "runaway.factor", c.Runaway.Factor, "runaway: caller's error rate >= factor x its baseline median")
	fs.Float64Var(&c.Runaway.MinPerMin, "runaway.min-rate", c.Runaway.MinPerMin, "runaway: caller's error rate >= this (per minute)")
	fs.Float64Var(&c.Runaway.MinBaseline, "runaway.min-baseline", c.Runaway.MinBaseline, "runaway: medians below this (per minute) count as this")
	fs.Float64Var(&c.Runaway.RiseFactor, "runaway.others-rise-factor", c.Runaway.RiseFactor, "runaway: another caller rose when its score >= this")
	fs.Float64Var(&c.Runaway.RiseMinPerMin, "runaway.others-rise-min-rate", c.Runaway.RiseMinPerMin, "runaway: ...and its rate >= this (per minute)")
	fs.Float64Var(&c.Runaway.MaxOthersRisingShare, "runaway.max-others-rising", c.Runaway.MaxOthersRisingShare, "runaway: only while fewer than this share of the other callers rose")

	fs.Float64Var(&c.LimitTooLow.RiseFactor, "limit.rise-factor", c.LimitTooLow.RiseFactor, "limit too low: a caller's quota rate >= factor x its baseline median")
	fs.Float64Var(&c.LimitTooLow.MinPerMin, "limit.min-rate", c.LimitTooLow.MinPerMin, "limit too low: ...and >= this (per minute)")
	fs.IntVar(&c.LimitTooLow.MinCallers, "limit.min-callers", c.LimitTooLow.MinCallers, "limit too low: at least this many callers rose")
	fs.Float64Var(&c.LimitTooLow.MinShare, "limit.min-share", c.LimitTooLow.MinShare, "limit too low: at least this share of the agent's callers rose")

	fs.DurationVar(&c.Retry.Window, "retry.window", c.Retry.Window, "retry storm: window of raw rows examined")
	fs.Int64Var(&c.Retry.MinEarly, "retry.min-early", c.Retry.MinEarly, "retry storm: early retries needed")
	fs.Float64Var(&c.Retry.MinEarlyShare, "retry.min-early-share", c.Retry.MinEarlyShare, "retry storm: share of retries given a delay that came early")
	fs.Int64Var(&c.Retry.MinRotated, "retry.min-rotated", c.Retry.MinRotated, "retry storm: retries with a fresh messageId/idempotency key needed")
	fs.Float64Var(&c.Retry.MinRotatedShare, "retry.min-rotated-share", c.Retry.MinRotatedShare, "retry storm: share of retries with a fresh id")
	fs.DurationVar(&c.Retry.RotationMargin, "retry.rotation-margin", c.Retry.RotationMargin, "retry storm: ids first seen within this of the window's start are not called rotated (their first attempt may precede the window)")

	fs.DurationVar(&c.Retry.MaxDelay, "retry.max-delay", c.Retry.MaxDelay, "retry storm: longest Retry-After whose first attempt is looked for (widens the rows read)")
	fs.DurationVar(&c.Gateway.Window, "gateway.window", c.Gateway.Window, "gateway mangling: window of raw rows examined")
	fs.Int64Var(&c.Gateway.MinMangled, "gateway.min-mangled", c.Gateway.MinMangled, "gateway mangling: mangled agent/gateway pairs needed")
	fs.Float64Var(&c.Gateway.MinShare, "gateway.min-share", c.Gateway.MinShare, "gateway mangling: share of pairs mangled")

	fs.Int64Var(&c.Untyped.MinCount, "untyped.min-count", c.Untyped.MinCount, "untyped: untyped errors (no typed reason, a kind that cannot tell quota from crash) in the window needed")
	fs.Float64Var(&c.Untyped.MinShare, "untyped.min-share", c.Untyped.MinShare, "untyped: share of the agent's replies that are untyped errors")

	fs.IntVar(&c.TopK, "caller.top-k", c.TopK, "at most this many flagged callers get per-caller series")
	fs.IntVar(&c.TopLimits, "limit.top-k", c.TopLimits, "at most this many limit names per agent get their own series")
	fs.IntVar(&c.TopAgents, "agent.top-k", c.TopAgents, "at most this many agents get per-agent series (agents with a verdict always do; the rest sum into agent=\"other\")")
}

// Validate reports the first inconsistent setting.
func (c *Config) Validate() error {
	switch {
	case c.Bucket < time.Second || c.Bucket > time.Minute:
		return fmt.Errorf("window.bucket %v: want 1s..1m", c.Bucket)
	case time.Minute%c.Bucket != 0:
		return fmt.Errorf("window.bucket %v: must divide a minute", c.Bucket)
	case c.Window < c.Bucket:
		return fmt.Errorf("window.current %v is shorter than window.bucket %v", c.Window, c.Bucket)
	case c.Baseline < c.Bucket:
		return fmt.Errorf("window.baseline %v is shorter than window.bucket %v", c.Baseline, c.Bucket)
	case c.Retry.Window <= 0 || c.Gateway.Window <= 0:
		return fmt.Errorf("retry.window and gateway.window must be positive")
	case c.Retry.RotationMargin < 0 || c.Retry.RotationMargin >= c.Retry.Window:
		return fmt.Errorf("retry.rotation-margin %v: want 0 <= margin < retry.window %v", c.Retry.RotationMargin, c.Retry.Window)
	case c.Retry.MaxDelay < 0:
		return fmt.Errorf("retry.max-delay %v: want >= 0", c.Retry.MaxDelay)
	case c.Overload.Window < time.Second || c.Overload.Window > c.Window:
		return fmt.Errorf("overload.window %v: want 1s..window.current %v", c.Overload.Window, c.Window)
	case c.Overload.ClearAfter < time.Second || c.Overload.ClearAfter > c.Window:
		return fmt.Errorf("overload.clear-after %v: want 1s..window.current %v", c.Overload.ClearAfter, c.Window)
	case c.History.Min < 0 || c.History.Min > c.Baseline:
		return fmt.Errorf("history.min %v: want 0..window.baseline %v", c.History.Min, c.Baseline)
	case c.History.MinPeers < 1:
		return fmt.Errorf("history.min-peers must be >= 1")
	case c.TopK < 0 || c.TopLimits < 1 || c.TopAgents < 1:
		return fmt.Errorf("caller.top-k must be >= 0, limit.top-k and agent.top-k >= 1")
	}
	return nil
}

// Span is the time range one evaluation covers, in Unix seconds. The
// current window is the seconds (WindowStart, End]; the baseline is the
// buckets that start in [BaselineStart, BaselineEnd), BaselineEnd being the
// bucket boundary at or before WindowStart. The seconds between BaselineEnd
// and WindowStart belong to neither.
type Span struct {
	BaselineStart int64
	BaselineEnd   int64
	WindowStart   int64
	End           int64 // now
	Bucket        int64 // bucket length in seconds
}

// SpanAt returns the span an evaluation at now covers.
func (c *Config) SpanAt(now time.Time) Span {
	b := int64(c.Bucket / time.Second)
	end := now.Unix()
	ws := end - int64(c.Window/time.Second)
	be := floorTo(ws, b)
	bs := be - ceilTo(int64(c.Baseline/time.Second), b)
	return Span{BaselineStart: bs, BaselineEnd: be, WindowStart: ws, End: end, Bucket: b}
}

// WindowSeconds is the length of the current window.
func (s Span) WindowSeconds() float64 { return float64(s.End - s.WindowStart) }

// BaselineBuckets is the number of buckets in the baseline.
func (s Span) BaselineBuckets() int { return int((s.BaselineEnd - s.BaselineStart) / s.Bucket) }

func floorTo(v, b int64) int64 {
	if v >= 0 {
		return v - v%b
	}
	return v - (b+v%b)%b
}

func ceilTo(v, b int64) int64 { return floorTo(v+b-1, b) }
