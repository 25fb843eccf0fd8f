package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// limiter is a per-caller token bucket: burst calls at once, then one per
// refill. It decides at admission, before the agent sees the call, so a
// rejected call had no effect and its retry is safe (seed 002).
type limiter struct {
	burst  float64
	refill time.Duration
	mu     sync.Mutex
	tokens map[string]*bucket
}

type bucket struct {
	n    float64
	last time.Time
}

func newLimiter(burst int, refill time.Duration) *limiter {
	return &limiter{burst: float64(burst), refill: refill, tokens: map[string]*bucket{}}
}

// admit spends one of caller's tokens; when none is left it returns the
// whole seconds until one is back (at least 1: a zero delay invites an
// immediate retry that fails again).
func (l *limiter) admit(caller string) (ok bool, retryAfter int64) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.tokens[caller]
	if b == nil {
		b = &bucket{n: l.burst, last: now}
		l.tokens[caller] = b
	}
	b.n = math.Min(l.burst, b.n+float64(now.Sub(b.last))/float64(l.refill))
	b.last = now
	if b.n >= 1 {
		b.n--
		return true, 0
	}
	return false, max(1, int64(math.Ceil((1-b.n)*l.refill.Seconds())))
}

func (l *limiter) policy() string {
	return fmt.Sprintf("%.0f calls, then 1 per %v", l.burst, l.refill)
}

// details are the google.rpc details of a rejection, as JSON: ErrorInfo
// with a reason in the agent's own domain, RetryInfo and QuotaFailure.
func (l *limiter) details(caller, method string, retryAfter int64) []any {
	return []any{
		map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED",
			"domain": "research.agents.example", "metadata": map[string]string{"policy": "per-caller", "scope": "caller", "method": method}},
		map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.FormatInt(retryAfter, 10) + "s"},
		map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{
			map[string]any{"subject": "caller:" + caller, "description": l.policy()}}},
	}
}

// HTTP limits every call to next; callers are named by X-Caller. A
// rejection is a 429 with Retry-After, encoded for the binding: a JSON-RPC
// error -32603 (A2A's example code) on /jsonrpc, a google.rpc.Status under
// "error" on the HTTP+JSON routes.
func (l *limiter) HTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller := r.Header.Get("X-Caller")
		if caller == "" {
			caller = "anonymous"
		}
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/.well-known/") {
			next.ServeHTTP(w, r)
			return
		}
		ok, after := l.admit(caller)
		if ok {
			next.ServeHTTP(w, r)
			return
		}
		msg := fmt.Sprintf("Caller %s exceeded its limit (%s)", caller, l.policy())
		var body any
		if strings.HasPrefix(r.URL.Path, "/jsonrpc") {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req)
			if len(req.ID) == 0 {
				req.ID = json.RawMessage("null")
			}
			w.Header().Set("Content-Type", "application/json")
			body = map[string]any{"jsonrpc": "2.0", "id": req.ID,
				"error": map[string]any{"code": -32603, "message": msg, "data": l.details(caller, req.Method, after)}}
		} else {
			w.Header().Set("Content-Type", "application/a2a+json")
			body = map[string]any{"error": map[string]any{"code": 429, "status": "RESOURCE_EXHAUSTED", "message": msg,
				"details": l.details(caller, r.URL.Path, after)}}
		}
		w.Header().Set("Retry-After", strconv.FormatInt(after, 10))
		w.WriteHeader(http.StatusTooManyRequests)
		_ = json.NewEncoder(w).Encode(body)
	})
}

// Unary limits unary gRPC calls; callers are named by x-caller. A
// rejection is RESOURCE_EXHAUSTED with the same details as protobufs.
func (l *limiter) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	caller := "anonymous"
	if md, _ := metadata.FromIncomingContext(ctx); len(md.Get("x-caller")) > 0 {
		caller = md.Get("x-caller")[0]
	}
	ok, after := l.admit(caller)
	if ok {
		return handler(ctx, req)
	}
	st, err := status.New(codes.ResourceExhausted, fmt.Sprintf("Caller %s exceeded its limit (%s)", caller, l.policy())).WithDetails(
		&errdetails.ErrorInfo{Reason: "RATE_LIMIT_EXCEEDED", Domain: "research.agents.example",
			Metadata: map[string]string{"policy": "per-caller", "scope": "caller", "method": info.FullMethod}},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(after) * time.Second)},
		&errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{Subject: "caller:" + caller, Description: l.policy()}}},
	)
	if err != nil {
		return nil, err
	}
	return nil, st.Err()
}
