package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzTokens are credentials and customer values each detector must catch
// wherever they are planted between spaces.
var fuzzTokens = []string{
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmdXp6In0.c2lnbmF0dXJlZnV6eg",
	"ghp_Zk3mQ9xW2vB7nL4pR8tY1uJ6hG5fD0sA3cE9",
	"sk_live_51Hx9fUzzKq3vZ8pLw2NmB4tR",
	"AKIAQ7W3X5Z9K2M4P6R8",
	"fuzz.customer@mail-provider.example",
	"4539578763621486",
	"DE44500105175407324931",
	"+44 7700 900461",
	"536-22-8147",
}

// FuzzRedact states the redactor's invariants for any input: no function
// panics; Raw's output is valid UTF-8 and within its cap; Ident keeps a
// value or gives a well-formed hash; a token planted between spaces
// anywhere in the input never survives the text pass or Raw; and the input
// repeated to 1 MiB costs at most a fixed multiple of its length
// (checkLinear, linear_test.go).
func FuzzRedact(f *testing.F) {
	for _, c := range textCases {
		f.Add(c.in, uint16(0), uint8(0))
	}
	for _, s := range keepCases {
		f.Add(s, uint16(3), uint8(1))
	}
	f.Add("HTTP/1.1 401 X\r\nCookie: a=b\r\n\r\n{\"token\":\"x\"}", uint16(20), uint8(2))
	for _, h := range hostileTexts {
		f.Add(h.prefix+h.pattern+h.pattern+h.suffix, uint16(len(h.prefix)), uint8(3))
	}
	r := New([]byte("fuzz-key"))
	f.Fuzz(func(t *testing.T, s string, at uint16, which uint8) {
		_ = Text(s)
		out := Raw(nil, []byte(s), 64)
		if len(out) > 64 || !utf8.Valid(out) {
			t.Fatalf("Raw(%q) = %q: over the cap or invalid UTF-8", s, out)
		}
		id, keep := r.Ident(s, ID)
		if !keep && (!isHash(id) || id != r.Lookup(s)) {
			t.Fatalf("Ident(%q) = %q: not the value's hash", s, id)
		}
		_ = r.Path(s)
		_ = r.Endpoint(s)
		checkLinear(t, r, s)

		tok := fuzzTokens[int(which)%len(fuzzTokens)]
		pos := int(at) % (len(s) + 1)
		for pos > 0 && pos < len(s) && !utf8.RuneStart(s[pos]) {
			pos--
		}
		planted := s[:pos] + " " + tok + " " + s[pos:]
		if got := Text(planted); strings.Contains(got, tok) {
			t.Fatalf("Text kept the planted %q:\n in: %q\nout: %q", tok, planted, got)
		}
		if got := string(Raw(nil, []byte(planted), 1<<20)); strings.Contains(got, tok) {
			t.Fatalf("Raw kept the planted %q:\n in: %q\nout: %q", tok, planted, got)
		}
	})
}
