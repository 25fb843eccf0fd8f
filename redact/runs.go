package redact

// Linear time. The scan visits each byte once, but a detector that starts
// at a word start may look far past it: to the end of a run of key bytes,
// of a line, of a URL. Word starts can follow one another every two bytes
// inside one such run (1-1-1-…, a.b.a.b…, eyJ.eyJ.…, %40%40…), so a look
// repeated from each of them costs the square of the run's length: a 64 KiB
// message took seconds. Every unbounded look therefore goes through a run
// cache: where a run of a byte class ends does not depend on where in the
// run the look starts, so a start inside the last run found gets the run's
// end at once. The scanner moves only forward, so each byte is scanned by a
// bounded number of fresh looks. Looks that are not cached are bounded per
// candidate (phone and card numbers, IBANs, key names of 64 bytes) or end
// in a match that the scan then skips (PEM blocks, a secret's value).
//
// scanner.work counts the bytes the detectors examine: a deterministic
// measure of the pass's cost, which the tests hold to a fixed multiple of
// the text's length whatever the text (Redactor.Work reports it). A scanner
// with uncached set looks from every start again, as the pass did before
// the caches: the tests compare the two, for equal results and to show
// the cost they remove.

// run is the last run of one byte class found: s[from:to] are all of the
// class, and the run ends at to (forward) or starts at from (backward,
// where from may be the scan's copy point sc.last instead).
type run struct {
	from, to int
	ok       bool
}

// fwd returns the end of the run of bytes of class t that starts at i.
func (sc *scanner) fwd(r *run, t *[256]bool, i int) int {
	if r.ok && i >= r.from && i <= r.to && !sc.uncached {
		return r.to
	}
	s := sc.s
	j := i
	for j < len(s) && t[s[j]] {
		j++
	}
	sc.work += j - i + 1
	*r = run{i, j, true}
	return j
}

// back returns the start of the run of bytes of class t that ends at i,
// not before sc.last (bytes before it are already in dst).
func (sc *scanner) back(r *run, t *[256]bool, i int) int {
	s := sc.s
	l := i
	steps := 1
	for l > sc.last && t[s[l-1]] {
		if r.ok && l == r.to && !sc.uncached {
			// The run found before ends here: its start is this one's.
			// If that start was the copy point of its time, the copy
			// point now is at or after it.
			l = max(r.from, sc.last)
			break
		}
		l--
		steps++
	}
	sc.work += steps
	*r = run{l, i, true}
	return l
}

// nextQuote returns the first p >= i where s[p] is '"' escaped by a
// backslash (esc) or not (!esc), or len(s).
func (sc *scanner) nextQuote(r *run, i int, esc bool) int {
	if r.ok && i >= r.from && i <= r.to && !sc.uncached {
		return r.to
	}
	s := sc.s
	p := i
	for p < len(s) {
		if s[p] == '"' && (p > 0 && s[p-1] == '\\') == esc {
			break
		}
		p++
	}
	sc.work += p - i + 1
	*r = run{i, p, true}
	return p
}

// Byte classes of the cached runs.
var (
	spaceTab   = classOf(func(c byte) bool { return c == ' ' || c == '\t' })
	notNewline = classOf(func(c byte) bool { return c != '\n' && c != '\r' })
	notURLEnd  = classOf(func(c byte) bool { return !urlEnd[c] })
	localClass = classOf(localByte)
	userClass  = classOf(func(c byte) bool { return isIdent(c) || c == '-' || c == '.' })
	b64URL     = classOf(isB64URL)
	randClass  = classOf(func(c byte) bool { return isAlnum(c) || c == '-' || c == '_' || c == '+' || c == '/' })
	credClass  = classOf(func(c byte) bool {
		return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '='
	})
)

func classOf(f func(byte) bool) (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = f(byte(c))
	}
	return
}
