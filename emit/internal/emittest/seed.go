package emittest

import (
	"encoding/json"
	"io"
	"net/http"
)

// RateLimiter answers a call from caller orchestrator-7 as seed 002's
// rate limiter does (429, Retry-After, planted Set-Cookie and X-Api-Key);
// other calls reach next.
func RateLimiter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Caller") != "orchestrator-7" {
			next.ServeHTTP(w, r)
			return
		}
		// Seed 002's shape, without reading the request body.
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "12")
		w.Header().Set("Set-Cookie", "setcookie-value")
		w.Header().Set("X-Api-Key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc")
		w.Header().Set("Idempotency-Key", r.Header.Get("Idempotency-Key"))
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, Seed002Body(r))
	})
}

// Seed002Body is the JSON-RPC body seed 002 recommends for a rate-limited
// call: -32603 with an ErrorInfo of the agent's own domain
// (RATE_LIMIT_EXCEEDED), RetryInfo and QuotaFailure.
func Seed002Body(r *http.Request) string {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": "req-41",
		"error": map[string]any{
			"code": -32603, "message": "Caller orchestrator-7 exceeded 60 SendMessage calls per minute",
			"data": []any{
				map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED",
					"domain": "research.agents.example", "metadata": map[string]string{"limit": "60", "window": "60s"}},
				map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"},
				map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{
					"subject": "caller:orchestrator-7", "description": "60 SendMessage calls per minute"}}},
			},
		},
	})
	return string(b)
}
