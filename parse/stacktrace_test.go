package parse

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLooksStackTrace: one frame of each runtime's form is a stack trace;
// texts that only look alike (a host and port in parentheses, an RFC
// section, a file name in prose, a version) are not.
func TestLooksStackTrace(t *testing.T) {
	traces := []string{
		"at com.dealer.leads.LeadStore.save(LeadStore.java:88)",
		"boom\n\tat java.base/java.lang.Thread.run(Thread.java:833)",
		"at jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)",
		"Error: x\n    at searchInventory (/srv/agent/src/search.js:33:17)",
		"    at async Promise.all (/srv/agent/src/index.mjs:10:5)",
		"    at /srv/agent/src/search.ts:33:17",
		"    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
		"   at Dealer.Leads.Submit(Lead lead) in C:\\src\\Dealer\\Leads.cs:line 42",
		"             at /rustc/90b35a6239c/library/std/src/panicking.rs:645:5",
		"Traceback (most recent call last):",
		`  File "/srv/agent/tools/inventory.py", line 57, in lookup`,
		"goroutine 7 [running]:",
		"main.search(...)\n\t/srv/agent/search.go:112 +0x1d",
		"/srv/agent/lead.rb:12:in `submit'",
		"#0 /var/www/app/Lead.php(42): App\\Lead->submit()",
	}
	for _, s := range traces {
		if !looksStackTrace(s) {
			t.Errorf("not taken for a stack trace: %q", s)
		}
	}
	plain := []string{
		"Per-key rate limit exceeded.",
		"The upstream failed at api.example.com (port 443).",
		"Retry at a later time (see RFC 9110 section 10.2.3).",
		"failed at inventory.go:12",
		"Look at the search capabilities (capabilities.json) first.",
		"Filter is not advertised at this deployment (v3.0:2026).",
		"File upload failed, line too long",
		"goroutine limit reached",
		"Read the published search capabilities before forming another query.",
		"at",
		"",
	}
	for _, s := range plain {
		if looksStackTrace(s) {
			t.Errorf("taken for a stack trace: %q", s)
		}
	}
}

// TestLooksStackTraceLinear: a hostile text of partial frames costs a
// bounded look-ahead per candidate, not a rescan to the end.
func TestLooksStackTraceLinear(t *testing.T) {
	s := strings.Repeat("at a(", 200000) // every candidate opens a parenthesis that never closes
	if looksStackTrace(s) {
		t.Error("partial frames taken for a stack trace")
	}
}

// TestMessageAcceptsLead: a clause naming the lead and its acceptance,
// without a negation.
func TestMessageAcceptsLead(t *testing.T) {
	for msg, want := range map[string]bool{
		"The lead was accepted, but no requested appointment time is available.":       true,
		"Lead received; the requested appointment time is unavailable.":                true,
		"We recorded your lead but could not book the appointment.":                    true,
		"No requested appointment time could be accepted; the lead was not submitted.": false,
		"The submission was rejected because no appointment time could be accepted.":   false,
		"The lead was rejected because no appointment time could be accepted.":         false,
		"The requested appointment time is unavailable.":                               false,
		"The lead wasn't accepted: no appointment time is free.":                       false,
	} {
		if got := messageAcceptsLead(msg); got != want {
			t.Errorf("messageAcceptsLead(%q) = %v; want %v", msg, got, want)
		}
	}
}

// TestMayHoldFrameFindsEveryMarkByte holds looksStackTrace's first look,
// a byte table on short texts and four byte searches on long ones, to its
// rule: true exactly when the text holds '(', ':', '"' or '[', at any
// place, on both sides of the length where the method changes.
func TestMayHoldFrameFindsEveryMarkByte(t *testing.T) {
	for _, n := range []int{1, 10, 63, 64, 65, 200} {
		plain := strings.Repeat("a b-c_d.e/", n/10+1)[:n]
		if mayHoldFrame(plain) {
			t.Errorf("mayHoldFrame(%q) = true: no mark byte in it", plain)
		}
		for _, c := range []byte{'(', ':', '"', '['} {
			for _, at := range []int{0, n / 2, n - 1} {
				b := []byte(plain)
				b[at] = c
				if !mayHoldFrame(string(b)) {
					t.Errorf("mayHoldFrame misses %q at %d of %d bytes", c, at, n)
				}
			}
		}
		for _, c := range []byte{')', ';', '\'', ']', '{', 0x80} { // near misses
			b := []byte(plain)
			b[n/2] = c
			if mayHoldFrame(string(b)) {
				t.Errorf("mayHoldFrame takes %q at %d of %d bytes for a mark", c, n/2, n)
			}
		}
	}
	// Random texts dense with the marks, their neighbours and bytes whose
	// high bit is set (borrows of the word test).
	pick := []byte("(:\"[)';]9Za \x00\x01\x7f\x80\xa8\xba\xdb\xff")
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		b := make([]byte, 1+rng.IntN(80))
		for i := range b {
			b[i] = pick[rng.IntN(len(pick))]
			if rng.IntN(3) > 0 && (b[i] == '(' || b[i] == ':' || b[i] == '"' || b[i] == '[') {
				b[i] = 'a' // most texts have no mark
			}
		}
		if got, want := mayHoldFrame(string(b)), strings.ContainsAny(string(b), "(:\"["); got != want {
			t.Fatalf("mayHoldFrame(%q) = %v, want %v", b, got, want)
		}
	}
}

// TestPlainWordTable: plainWord's byte table holds exactly the ASCII
// letters, '-', '_' and '.': every byte value is tried alone and inside a
// word, and a word over 32 bytes is never plain.
func TestPlainWordTable(t *testing.T) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		want := b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '-' || b == '_' || b == '.'
		if got := plainWord(string([]byte{b})); got != want {
			t.Errorf("plainWord(%q) = %v, want %v", b, got, want)
		}
		if got := plainWord("per" + string([]byte{b}) + "caller"); got != want {
			t.Errorf("plainWord(%q) = %v, want %v", "per"+string([]byte{b})+"caller", got, want)
		}
	}
	if !plainWord("") || !plainWord(strings.Repeat("a", 32)) || plainWord(strings.Repeat("a", 33)) {
		t.Error(`plainWord: "" and 32 letters are plain, 33 are not`)
	}
}
