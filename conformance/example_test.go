package conformance_test

import (
	"fmt"

	"github.com/errtrail/errtrail/conformance"
)

// A team's test checks a captured reply and fails on a broken MUST; SHOULD
// rules are advice. docs/conformance.md shows the same as a whole test file.
func ExampleChecker() {
	reply := "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n\r\n" +
		`{"jsonrpc":"2.0","id":"1","error":{"code":-32603,"message":"Rate limit exceeded",` +
		`"data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"agents.example.com"},` +
		`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}`
	res, err := conformance.NewChecker().Check([]byte(reply))
	if err != nil {
		fmt.Println("unreadable:", err)
		return
	}
	for _, b := range res.Broken {
		fmt.Println(b.Level, b.Rule, b.Checks)
	}
	fmt.Println("violations:", res.Violations())
	// Output:
	// MUST retry_after_header_missing Seed 000: "an HTTP 429 MUST include `Retry-After`"
	// violations: 1
}
