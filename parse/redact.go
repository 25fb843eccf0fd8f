package parse

import "strings"

// Redaction: no credential or customer value may reach a record, a log line
// or a metric. Message texts and kept bodies pass through redact, which
// replaces bearer tokens, JWTs, API keys, e-mail addresses and phone numbers
// with a placeholder. It works on bytes without regular expressions and
// copies only when it replaces something.

const (
	phToken = "[token]"
	phJWT   = "[jwt]"
	phKey   = "[key]"
	phEmail = "[email]"
	phPhone = "[phone]"
)

// redactStr returns s with secrets replaced; the result lives in the arena
// when something was replaced. It sets d.sc.echoed when it replaced anything.
func (d *Decoder) redactStr(s string) string {
	if s == "" {
		return s
	}
	out, changed := redactAppend(d.sc.tmp[:0], s, true)
	if !changed {
		return s
	}
	d.sc.tmp = out[:0]
	d.sc.echoed = true
	return d.sc.ar.save(out)
}

// RedactString returns s with credentials and customer values replaced by
// placeholders. It is exported for the ingester's logs and dead-letter rows.
func RedactString(s string) string {
	out, changed := redactAppend(nil, s, true)
	if !changed {
		return s
	}
	return string(out)
}

// RedactRaw appends to dst the first max bytes of b after redaction. Invalid
// UTF-8 and control bytes other than tab/newline are replaced with '?', so
// the result is safe to store as text.
func RedactRaw(dst, b []byte, max int) []byte {
	if max <= 0 {
		return dst
	}
	if len(b) > max {
		b = b[:max]
	}
	start := len(dst)
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 0x80 {
			r, n := decodeRuneAt(b, i)
			if r < 0 {
				dst = append(dst, '?')
				continue
			}
			dst = append(dst, b[i:i+n]...)
			i += n - 1
			continue
		}
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			c = '?'
		}
		dst = append(dst, c)
	}
	red, changed := redactAppend(nil, bytesToString(dst[start:]), false)
	if changed {
		dst = append(dst[:start], red...)
	}
	return dst
}

func decodeRuneAt(b []byte, i int) (rune, int) {
	c := b[i]
	var n int
	switch {
	case c&0xE0 == 0xC0:
		n = 2
	case c&0xF0 == 0xE0:
		n = 3
	case c&0xF8 == 0xF0:
		n = 4
	default:
		return -1, 1
	}
	if i+n > len(b) {
		return -1, 1
	}
	for k := 1; k < n; k++ {
		if b[i+k]&0xC0 != 0x80 {
			return -1, 1
		}
	}
	return 0, n
}

// wordBytes marks the bytes that can belong to a token, address or key.
var wordBytes = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' ||
			b == '_' || b == '-' || b == '.' || b == '+' || b == '/' || b == '=' || b == '@' || b == '%' || b == '~'
	}
	return
}()

func isWordByte(c byte) bool { return wordBytes[c] }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// redactAppend scans s and, at the first secret, starts copying into dst.
// changed is false (and dst untouched) when s has nothing to redact.
func redactAppend(dst []byte, s string, _ bool) ([]byte, bool) {
	if !mayHoldSecret(s) {
		return dst, false
	}
	changed := false
	last := 0 // bytes of s before last are already in dst (when changed)
	emit := func(from, to int, ph string) {
		if !changed {
			changed = true
			dst = append(dst, s[:from]...)
		} else {
			dst = append(dst, s[last:from]...)
		}
		dst = append(dst, ph...)
		last = to
	}
	i := 0
	for i < len(s) {
		c := s[i]
		// Phone numbers: + or digit or '(' starting a run of digits and
		// separators holding 9 to 15 digits.
		if (c == '+' || c == '(' || isDigit(c)) && (i == 0 || !isWordByte(s[i-1]) || s[i-1] == '+') {
			if end, ok := phoneAt(s, i); ok {
				emit(i, end, phPhone)
				i = end
				continue
			}
		}
		if !isWordByte(c) {
			i++
			continue
		}
		// A word: a maximal run of word bytes.
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		w := s[i:j]
		// Trim trailing sentence punctuation off the word.
		for len(w) > 0 && (w[len(w)-1] == '.' || w[len(w)-1] == '-') {
			w = w[:len(w)-1]
		}
		end := i + len(w)
		if len(w) < 5 {
			i = j
			continue
		}
		switch {
		case (w[0]|0x20 == 'b') && (equalFoldASCII(w, "bearer") || equalFoldASCII(w, "basic")):
			// The credential follows after spaces.
			k := j
			for k < len(s) && s[k] == ' ' {
				k++
			}
			m := k
			for m < len(s) && isWordByte(s[m]) {
				m++
			}
			if m-k >= 8 {
				emit(k, m, phToken)
				i = m
				continue
			}
		case isEmail(w):
			emit(i, end, phEmail)
		case isJWT(w):
			emit(i, end, phJWT)
		case isAPIKey(w):
			emit(i, end, phKey)
		}
		i = j
	}
	if changed {
		dst = append(dst, s[last:]...)
	}
	return dst, changed
}

// equalFoldASCII compares ASCII case-insensitively (header names, keywords);
// cheaper than strings.EqualFold, which handles all of Unicode.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	if a == b { // header names usually arrive in the canonical case
		return true
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z' {
			return false
		}
	}
	return true
}

func phoneAt(s string, i int) (int, bool) {
	digits, seps := 0, 0
	plus := s[i] == '+'
	j := i
	if plus {
		j++
	}
	lastDigit := -1
	for j < len(s) {
		c := s[j]
		switch {
		case isDigit(c):
			digits++
			lastDigit = j
		case c == ' ' || c == '-' || c == '(' || c == ')' || c == '.':
			if j+1 >= len(s) || !(isDigit(s[j+1]) || s[j+1] == '(' || s[j+1] == ' ') {
				goto done
			}
			seps++
		default:
			goto done
		}
		if digits > 15 {
			return 0, false
		}
		j++
	}
done:
	if lastDigit < 0 {
		return 0, false
	}
	end := lastDigit + 1
	if end < len(s) && (isWordByte(s[end]) && s[end] != '.' && s[end] != '-') {
		return 0, false
	}
	if digits >= 9 && digits <= 15 && (plus || seps >= 2) {
		return end, true
	}
	return 0, false
}

func isEmail(w string) bool {
	if strings.IndexByte(w, '@') < 0 {
		return false
	}
	at := -1
	for k := 0; k < len(w); k++ {
		if w[k] == '@' {
			if at >= 0 {
				return false
			}
			at = k
		}
	}
	if at <= 0 || at >= len(w)-3 {
		return false
	}
	dom := w[at+1:]
	dot := -1
	for k := 0; k < len(dom); k++ {
		if dom[k] == '.' {
			dot = k
		}
	}
	return dot > 0 && dot < len(dom)-2
}

func isJWT(w string) bool {
	if len(w) < 20 || w[0] != 'e' || w[:3] != "eyJ" {
		return false
	}
	dots := 0
	for k := 0; k < len(w); k++ {
		if w[k] == '.' {
			dots++
		}
	}
	return dots == 2
}

var keyPrefixes = [...]string{"sk-", "sk_live_", "sk_test_", "rk_live_", "pk_live_", "ghp_", "gho_", "ghs_", "github_pat_",
	"xoxb-", "xoxp-", "AKIA", "AIza", "glpat-", "api_key_", "apikey_"}

func isAPIKey(w string) bool {
	if len(w) < 15 {
		return false
	}
	for _, p := range keyPrefixes {
		if len(w) >= len(p)+12 && w[:len(p)] == p {
			return true
		}
	}
	if len(w) < 40 || isUUIDish(w) {
		return false
	}
	letters, digits := 0, 0
	for k := 0; k < len(w); k++ {
		c := w[k]
		switch {
		case isDigit(c):
			digits++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
		case c == '_' || c == '-' || c == '+' || c == '/' || c == '=':
		default:
			return false // paths, URLs and dotted names are not keys
		}
	}
	return letters > 0 && digits > 0
}

// isUUIDish accepts UUIDs and dash-joined hex ids, which are identifiers
// needed for support, not secrets. A long undivided hex run is a key.
func isUUIDish(w string) bool {
	dashes := 0
	for k := 0; k < len(w); k++ {
		c := w[k]
		if c == '-' {
			dashes++
			continue
		}
		if !(isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return dashes > 0
}

// mayHoldSecret is a cheap first look: every pattern redactAppend replaces
// needs an '@', a digit, a word of at least 15 bytes, or the word Bearer or
// Basic before a credential. Texts without any go through as is.
func mayHoldSecret(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		k := secretClass[s[i]]
		if k >= scTrigger { // rare: '@', a digit, 'b' or 'B'
			if k == scTrigger {
				return true
			}
			if run == 0 && len(s)-i >= 5 &&
				(equalFoldASCII(s[i:i+5], "basic") || len(s)-i >= 6 && equalFoldASCII(s[i:i+6], "bearer")) {
				return true
			}
		}
		// Branch-free run length: the low bit of a class is "part of a
		// word"; -(k&1) is all ones for a word byte, zero for a separator.
		run = (run + 1) & -int(k&1)
		if run >= 15 {
			return true
		}
	}
	return false
}

// Byte classes for mayHoldSecret; the low bit marks the bytes of a word.
const (
	scSep     = 0 // ends a word
	scWord    = 1 // part of a word
	scTrigger = 2 // '@' or a digit: may belong to an address, a phone or a key
	scB       = 3 // 'b' or 'B': part of a word, may start Bearer or Basic
)

var secretClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch b := byte(c); {
		case b == '@' || isDigit(b):
			t[c] = scTrigger
		case b|0x20 == 'b':
			t[c] = scB
		case isWordByte(b):
			t[c] = scWord
		}
	}
	return
}()
