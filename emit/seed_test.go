package emit

import (
	"encoding/json"
	"net/http"
)

// seed002Body is the JSON-RPC body seed 002 recommends for a rate-limited
// call: -32603 with an ErrorInfo of the agent's own domain
// (RATE_LIMIT_EXCEEDED), RetryInfo and QuotaFailure.
func seed002Body(r *http.Request) string {
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
