package redact

import (
	"fmt"
	"testing"
)

var benchIDs = []string{"lg-f71283a41e:1", "req_CHA48SZY9J1A6WKVCCCND13319", "req-737", "f4879de3-36dd-494c-8bb5-e98aba5ba26d", "client-24", "SendStreamingMessage", "relay-agent-0", "rate_limited"}

// BenchmarkRedact measures each rule on the values of a typical event:
// identifiers (Keep), the keyed hash, a message text and header names.
func BenchmarkRedact(b *testing.B) {
	r := New([]byte("k"))
	for _, s := range benchIDs {
		b.Run(s, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r.Keep(s, ID)
			}
		})
	}
	b.Run("scanIdent-uuid", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			scanIdent(benchIDs[3])
		}
	})
	b.Run("hash", func(b *testing.B) {
		buf := make([]byte, 0, 64)
		for i := 0; i < b.N; i++ {
			buf = r.appendHash(buf[:0], "client-24-ed3fa73a")
		}
	})
	b.Run("text-msg", func(b *testing.B) {
		buf := make([]byte, 0, 256)
		for i := 0; i < b.N; i++ {
			buf, _ = AppendText(buf[:0], "Caller client-19 exceeded 60 SendStreamingMessage calls per minute")
		}
	})
	b.Run("text-phone", func(b *testing.B) {
		// A national number: libphonenumber's metadata is asked for each
		// region of PhoneRegions until one calls it valid.
		buf := make([]byte, 0, 256)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf, _ = AppendText(buf[:0], "callback number 07700 900873 is not reachable")
		}
	})
	b.Run("text-order-number", func(b *testing.B) {
		// Ten digits that are no valid number in any region checked.
		buf := make([]byte, 0, 256)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf, _ = AppendText(buf[:0], "order 0000123456 was not found")
		}
	})
	b.Run("sensitive-header", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			SensitiveHeader("Content-Type")
			SensitiveHeader("Retry-After")
			SensitiveHeader("RateLimit-Policy")
		}
	})
}

// BenchmarkTextHostile runs the text pass over each hostile text of
// linear_test.go at 64 KiB and 1 MiB, next to a plain text of the same
// size: ns/op grows with the size, not its square, and work/B (bytes the
// detectors examined per byte) stays under workFactor.
func BenchmarkTextHostile(b *testing.B) {
	cases := append([]hostile{{look: "plain", pattern: "Caller client-19 exceeded the limit of the agent "}}, hostileTexts...)
	for _, n := range []int{64 << 10, 1 << 20} {
		for _, h := range cases {
			s := h.text(n)
			b.Run(fmt.Sprintf("%dKiB/%s", n>>10, h.pattern), func(b *testing.B) {
				buf := make([]byte, 0, len(s)+64)
				b.SetBytes(int64(len(s)))
				for i := 0; i < b.N; i++ {
					buf, _ = AppendText(buf[:0], s)
				}
				b.ReportMetric(float64(textWork(s))/float64(len(s)), "work/B")
			})
		}
	}
}
