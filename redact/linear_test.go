package redact

import (
	"flag"
	"strings"
	"testing"
)

// The text pass's cost is measured by its work (runs.go): the bytes its
// detectors examine, counted by the scanner itself. It is deterministic, so
// these tests hold it to a bound without timing anything: a plain text
// costs about 4 bytes examined per byte, and no text may cost more than
// workFactor. A look repeated from every word start of a run (the defect of
// issue 23 §0) costs thousands per byte on a 64 KiB text.
const workFactor = 64

// hostile is one text per look-ahead that was quadratic: prefix, then the
// pattern repeated, then suffix (what makes the candidates fail late).
type hostile struct {
	look                    string
	prefix, pattern, suffix string
}

var hostileTexts = []hostile{
	{look: "a word's name and key bytes (wordAt)", pattern: "a.b."},
	{look: "a word's name and key bytes, after '+' and '='", pattern: "+1"},
	{look: "the spaces after a word's name (wordAt)", pattern: "a-", suffix: strings.Repeat(" ", 16<<10) + "=x"},
	{look: "long random strings (randomRunAt)", pattern: "A1a-"},
	{look: "long random strings, digits only", pattern: "1-"},
	{look: "long random strings, SRI digests", pattern: "sha256-"},
	{look: "a JWT's first part (jwtAt)", pattern: "eyJxxxxxxxxxxxx-"},
	{look: "a JWT's parts after the first (jwtAt)", pattern: "eyJxxxxxxxxxxxx-", suffix: ".a" + strings.Repeat("b", 16<<10)},
	{look: "JWT-like words (jwtAt)", pattern: "eyJ."},
	{look: "an address's local part (atSign)", pattern: "%40"},
	{look: "an address's local part before a domain", pattern: "a%40"},
	{look: "user:password@ without a scheme (atSign)", prefix: "/" + strings.Repeat("x", 16<<10) + ":", pattern: "a%40"},
	{look: "a URL's end (urlUserinfo)", pattern: "https://u:p@"},
	{look: "a URL's last '@' (urlUserinfo)", pattern: "http://a:b/"},
	{look: "the credential after a scheme (authSchemeAt)", pattern: "Bearer%20", suffix: `="`},
	{look: "a header line's value (lineEnd)", pattern: "cookie: [", suffix: "]"},
	{look: "a JSON line's value (lineEnd)", pattern: `cookie: \"[`, suffix: `]"`},
	{look: "a cut PEM block's body, a short word last (pemTailAt)", pattern: "AAAAAAAAAAAAAAAA a ", suffix: "-----END x"},
}

// text is the hostile text of about n bytes: the pattern repeated whole,
// so that the suffix follows a complete one.
func (h hostile) text(n int) string {
	return h.prefix + strings.Repeat(h.pattern, n/len(h.pattern)) + h.suffix
}

// grow repeats p to n bytes.
func grow(p string, n int) string { return strings.Repeat(p, n/len(p)+1)[:n] }

func textWork(s string) int {
	_, _, w := appendText(nil, s)
	return w
}

func uncachedWork(s string) int {
	_, _, w := appendTextScan(nil, s, true)
	return w
}

// TestTextWorkIsLinear holds every hostile text, at 64 KiB and 1 MiB, to
// workFactor bytes examined per byte, and shows for each that the looks
// without their caches (the pass before issue 23) exceed that bound already
// at 8 KiB: the test fails on the old looks.
func TestTextWorkIsLinear(t *testing.T) {
	plain := grow("Caller client-19 exceeded the limit of the agent ", bigText())
	if w := textWork(plain); w > 8*len(plain) {
		t.Fatalf("a plain text of %d bytes cost %d: more than 8 per byte", len(plain), w)
	}
	for _, h := range hostileTexts {
		for _, n := range []int{64 << 10, bigText()} {
			s := h.text(n)
			if w := textWork(s); w > workFactor*len(s) {
				t.Errorf("%s: %q ×%d cost %d bytes examined, %.0f per byte; want at most %d",
					h.look, h.pattern, n, w, float64(w)/float64(len(s)), workFactor)
			}
		}
		s := h.text(8 << 10)
		if w := uncachedWork(s); w <= workFactor*len(s) {
			t.Errorf("%s: without the caches %q costs %d, %.0f per byte: this text does not show the defect",
				h.look, h.pattern, w, float64(w)/float64(len(s)))
		}
	}
}

// TestRunCachesKeepResults: the caches change what the pass costs, never
// what it replaces. Each hostile text, the corpora of the other tests and
// their concatenations give the same output with and without them.
func TestRunCachesKeepResults(t *testing.T) {
	var texts []string
	for _, h := range hostileTexts {
		texts = append(texts, h.text(2<<10), h.prefix+h.pattern+h.suffix) // the pass without caches is quadratic
	}
	for _, c := range textCases {
		texts = append(texts, c.in)
	}
	texts = append(texts, keepCases...)
	n := len(texts)
	for i := 0; i < n; i++ {
		texts = append(texts, texts[i]+" "+texts[(i*7+3)%n], texts[i]+texts[(i*5+1)%n])
	}
	for _, s := range texts {
		a, ca, _ := appendTextScan(nil, s, false)
		b, cb, _ := appendTextScan(nil, s, true)
		if ca != cb || string(a) != string(b) {
			t.Errorf("the caches changed the result for %.80q…:\n with    %.200q\n without %.200q", s, a, b)
		}
	}
}

// TestRedactorWorkCounts: Work adds up every text pass of a Redactor,
// also those of paths and endpoints, and an identifier that needs none adds
// nothing.
func TestRedactorWorkCounts(t *testing.T) {
	r := New([]byte("k"))
	if r.Work() != 0 {
		t.Fatalf("a new Redactor has work %d", r.Work())
	}
	s := "call 07911 123456 now"
	r.AppendText(nil, s)
	w1 := r.Work()
	if w1 != textWork(s) || w1 < len(s) {
		t.Fatalf("Work after one text = %d, want the pass's %d (at least its length %d)", w1, textWork(s), len(s))
	}
	r.Keep("client-24", ID)
	if r.Work() != w1 {
		t.Errorf("a plain identifier added work: %d → %d", w1, r.Work())
	}
	r.Path("contacts[alice@example.com].phone")
	w2 := r.Work()
	if w2 <= w1 {
		t.Errorf("a field path's text pass was not counted: %d → %d", w1, w2)
	}
	r.Raw(nil, []byte("HTTP/1.1 401 X\r\nCookie: a=b\r\n\r\n{}"), 64)
	if r.Work() <= w2 {
		t.Errorf("Raw was not counted: %d → %d", w2, r.Work())
	}
}

// grownSize is how far FuzzRedact grows an input: in the seed corpus run
// 1 MiB for a short one (a pattern, the shape of the texts) and
// 64 KiB for the others; 16 KiB while fuzzing, so that the fuzzer keeps
// its pace. 16 KiB already separates a linear pass (under workFactor bytes
// examined per byte) from a quadratic one (hundreds to thousands).
func grownSize(s string) int {
	switch {
	case fuzzing():
		return 16 << 10
	case len(s) <= 32:
		return bigText()
	}
	return 64 << 10
}

// bigText is 1 MiB, or 64 KiB under -race (raceEnabled).
func bigText() int {
	if raceEnabled {
		return 64 << 10
	}
	return 1 << 20
}

func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// checkLinear is FuzzRedact's time invariant: s repeated to about 1 MiB
// (grownSize) costs at most workFactor bytes examined per byte in the text
// pass and, in the seed corpus run, in Raw, a path and an endpoint,
// whatever s is; and on s itself the caches change nothing. While fuzzing
// only the text pass is grown (Raw, paths and endpoints run the same pass),
// so that the fuzzer keeps most of its pace.
func checkLinear(t *testing.T, r *Redactor, s string) {
	if s == "" {
		return
	}
	if len(s) <= 256 { // the pass without caches is quadratic
		a, ca, _ := appendTextScan(nil, s, false)
		b, cb, _ := appendTextScan(nil, s, true)
		if ca != cb || string(a) != string(b) {
			t.Fatalf("the caches changed the result for %q:\n with    %q\n without %q", s, a, b)
		}
	}
	g := grow(s, grownSize(s))
	if w := textWork(g); w > workFactor*len(g) {
		t.Fatalf("%q grown to %d bytes: the text pass examined %d bytes, %.0f per byte (at most %d)",
			s, len(g), w, float64(w)/float64(len(g)), workFactor)
	}
	if fuzzing() {
		return
	}
	if _, w := raw(nil, []byte(g), 4<<10); w > (workFactor+2)*len(g) {
		t.Fatalf("%q grown to %d bytes: Raw examined %d bytes, %.0f per byte", s, len(g), w, float64(w)/float64(len(g)))
	}
	w0 := r.Work()
	r.Path(g)
	r.Endpoint(g)
	if w := r.Work() - w0; w > 2*workFactor*len(g) {
		t.Fatalf("%q grown to %d bytes: Path and Endpoint examined %d bytes, %.0f per byte", s, len(g), w, float64(w)/float64(len(g)))
	}
}
