package redact

import (
	"unsafe"

	"github.com/errtrail/errtrail/internal/keep"
)

// The free-text pass: one left-to-right scan that dispatches on the byte at
// hand to the detectors that can start there, and copies into dst only from
// the first replacement on. Each detector lives in its own file: keys.go
// (secret-named keys, authentication schemes, PEM blocks, URL userinfo),
// tokens.go (JWTs, provider key formats, long random strings), pii.go
// (e-mail addresses, card numbers, IBANs, phone numbers), ssn.go (US
// Social Security numbers).

// Placeholders, one per kind of value replaced (declared in internal/keep,
// whose path and endpoint rules recognise them).
const (
	PhSecret   = keep.PhSecret
	PhToken    = keep.PhToken
	PhJWT      = keep.PhJWT
	PhKey      = keep.PhKey
	PhPEM      = keep.PhPEM
	PhUserinfo = keep.PhUserinfo
	PhEmail    = keep.PhEmail
	PhPhone    = keep.PhPhone
	PhCard     = keep.PhCard
	PhIBAN     = keep.PhIBAN
	PhSSN      = keep.PhSSN
)

// Text returns s with credentials and customer values replaced by
// placeholders; s itself when there is nothing to replace.
func Text(s string) string {
	out, changed := AppendText(nil, s)
	if !changed {
		return s
	}
	return string(out)
}

// AppendText appends s to dst with credentials and customer values
// replaced, and reports whether it replaced anything. When it did not, dst
// is returned unchanged (s is not copied), so the caller can keep s itself.
func AppendText(dst []byte, s string) ([]byte, bool) {
	out, changed, _ := appendText(dst, s)
	return out, changed
}

// appendText is AppendText that also reports the pass's work (runs.go):
// the bytes its detectors examined.
func appendText(dst []byte, s string) ([]byte, bool, int) {
	return appendTextScan(dst, s, false)
}

func appendTextScan(dst []byte, s string, uncached bool) ([]byte, bool, int) {
	if !mayHoldSecret(s) {
		return dst, false, len(s)
	}
	sc := scanner{s: s, dst: dst, base: len(dst), phones: phoneChecks, urlAt: -2, uncached: uncached}
	sc.run()
	work := len(s) + sc.work // the first look, then the scan
	if !sc.changed {
		return dst[:sc.base], false, work
	}
	sc.dst = append(sc.dst, s[sc.last:]...)
	return sc.dst, true, work
}

// scanner holds the state of one pass: bytes of s before last are already
// in dst (once changed is set).
type scanner struct {
	s       string
	dst     []byte
	base    int
	last    int
	changed bool
	phones  int // library checks of phone numbers left (pii.go)
	// ssnLabel is where the last word that labels a Social Security
	// number ended (ssn.go); 0 when none was seen.
	ssnLabel int

	work     int  // bytes the detectors examined (runs.go)
	uncached bool // look from every start again (runs.go; tests)

	// Run caches (runs.go), one per place that looks ahead, so that the
	// looks of one place move forward together.
	nameRun, b64Run, spWord run // wordAt: a word's name, its key bytes, the spaces after the name
	spKey, spSep            run // keyValueAt: spaces after a key's name, after its separator
	lineRun, uqRun, eqRun   run // lineEnd: newlines, unescaped and escaped quotes
	urlRun                  run // urlUserinfo: the URL
	urlAt                   int // the last '@' in urlRun; -1 none, -2 not looked for yet
	localRun, userRun       run // atSign: the local part, the user name before ':'
	credRun                 run // authSchemeAt: the credential
	credTrim                int // credRun's end without trailing '.' and ','
	jwt                     jwtRun
	rr                      randRun
	pemRun                  run // pemTailAt: a run of a PEM block's bytes
	pemShort                int // the last short word of pemRun that is not its last, or -1
}

// emit replaces s[from:to] with ph. from is clamped to what was already
// copied, so a detector that looks back can never copy a byte twice.
func (sc *scanner) emit(from, to int, ph string) {
	if from < sc.last {
		from = sc.last
	}
	sc.dst = append(sc.dst, sc.s[sc.last:from]...)
	sc.dst = append(sc.dst, ph...)
	sc.last = to
	sc.changed = true
}

func (sc *scanner) run() {
	s := sc.s
	i := 0
	for i < len(s) {
		c := s[i]
		switch byteClass[c] {
		case clSep:
			i++
			continue
		case clDash:
			if end, ok := sc.pemAt(i); ok {
				sc.emit(i, end, PhPEM)
				i = end
				continue
			}
			i++
			continue
		case clAt:
			if from, to, ph, ok := sc.atSign(i, 1); ok {
				sc.emit(from, to, ph)
				i = max(to, i+1) // userinfo ends before the '@'
				continue
			}
			i++
			continue
		case clPercent:
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				i++
				continue
			}
			if s[i+1] == '2' && s[i+2] == '5' && i+4 < len(s) && s[i+3] == '4' && s[i+4] == '0' {
				// %2540: an '@' encoded twice
				if from, to, ph, ok := sc.atSign(i, 5); ok {
					sc.emit(from, to, ph)
					i = max(to, i+5)
					continue
				}
			}
			if s[i+1] == '4' && s[i+2] == '0' {
				if from, to, ph, ok := sc.atSign(i, 3); ok {
					sc.emit(from, to, ph)
					i = max(to, i+3)
					continue
				}
			}
			if i+3 < len(s) && s[i+1] == '2' && s[i+2]|0x20 == 'b' && isDigit(s[i+3]) && numBoundary(s, i) {
				if end, ph, ok := sc.numberAt(i); ok {
					sc.emit(i, end, ph)
					i = end
					continue
				}
			}
			i += 3 // an escape is one byte: what follows starts a word
			continue
		case clColon:
			if i+2 < len(s) && s[i+1] == '/' && s[i+2] == '/' {
				if from, to, ok := sc.urlUserinfo(i + 3); ok {
					sc.emit(from, to, PhUserinfo)
					i = to
					continue
				}
				i += 3
				continue
			}
			i++
			continue
		case clQuote:
			if vs, ve, ok := sc.keyValueAt(i); ok {
				sc.emit(vs, ve, PhSecret)
				i = ve
				continue
			}
			i++
			continue
		case clDigit, clNumStart:
			if c != '+' && c != '(' {
				if end, ok := sc.ssnAt(i); ok {
					sc.emit(i, end, PhSSN)
					i = end
					continue
				}
			}
			if numBoundary(s, i) || sc.ssnLabelled(i) {
				if end, ph, ok := sc.numberAt(i); ok {
					sc.emit(i, end, ph)
					i = end
					continue
				}
			}
			if c == '+' || c == '(' {
				i++
				continue
			}
			// Not a number: the digits start a word (a random key may).
		}
		// A word: letters, digits or '_'.
		if c == '_' && i+1 < len(s) && isDigit(s[i+1]) {
			// user_536-22-8147: an SSN glued to a word by '_'.
			if end, ok := sc.ssnAt(i + 1); ok {
				sc.emit(i+1, end, PhSSN)
				i = end
				continue
			}
		}
		if !wordStart(s, i) {
			j := skipWord(s, i)
			sc.work += j - i
			i = j
			continue
		}
		from, to, ph, ok := sc.wordAt(i)
		if ok {
			sc.emit(from, to, ph)
			i = to
			continue
		}
		if to <= i { // a word of '_' or a lone byte
			to = skipWord(s, i)
			sc.work += to - i
		}
		i = to
	}
}

// wordAt runs the detectors that start at the first byte of a word.
func (sc *scanner) wordAt(i int) (from, to int, ph string, ok bool) {
	s := sc.s
	// One scan of the word decides which detectors can match: its run of
	// letters and digits (alnum) with the classes in it, the end of its
	// name (letters, digits, '_', '-', '.'), and its run of key bytes (b64).
	// The last two may reach far past the word: they come from the runs'
	// caches (runs.go).
	j := i
	var cls uint8
	for j < len(s) {
		k := idClass[s[j]] & (idUpper | idLower | idDigit) // ident.go
		if k == 0 {
			break
		}
		cls |= k
		j++
	}
	sc.work += j - i + 1
	alnum := j
	name := sc.fwd(&sc.nameRun, &nameByte, alnum)
	b64 := sc.fwd(&sc.b64Run, &keyByte, name)
	na, nb := alnum-i, b64-i
	c := s[i]
	if isLetter(c) {
		if na <= 20 && ssnLabelLen[na] && ssnLabelWord(s, i, alnum) {
			sc.ssnLabel = alnum
		}
		k := sc.fwd(&sc.spWord, &spaceTab, name)
		if k < len(s) && afterName[s[k]] {
			if vs, ve, ok := sc.keyValueAt(i); ok {
				return vs, ve, PhSecret, true
			}
		}
		if na >= 4 && na <= 16 && schemeStart[c] && (alnum < len(s) && schemeSpace[s[alnum]] || name > alnum) {
			if vs, ve, ok := sc.authSchemeAt(i); ok {
				return vs, ve, PhToken, true
			}
		}
		if nb >= 14 {
			if c == 'e' {
				if end, ok := sc.jwtAt(i); ok {
					return i, end, PhJWT, true
				}
			}
			if end, ok := sc.prefixedKeyAt(i); ok {
				return i, end, PhKey, true
			}
		}
		if na >= 4 && isUpper(c) && cls&idDigit != 0 {
			if end, ok := sc.ibanAt(i); ok {
				return i, end, PhIBAN, true
			}
		}
	}
	if nb >= 16 {
		if end, ok := sc.pemTailAt(i); ok {
			return i, end, PhPEM, true
		}
	}
	if nb >= 32 {
		if end, ok := sc.randomRunAt(i); ok {
			return i, end, PhKey, true
		}
	}
	if na >= 8 && na < 32 && cls == idUpper|idLower|idDigit {
		if end, ok := sc.shortKeyAt(i); ok {
			return i, end, PhKey, true
		}
	}
	return 0, alnum, "", false
}

var nameByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = isIdent(b) || b == '-' || b == '.'
	}
	return
}()

// keyByte marks the bytes of provider keys and random strings.
var keyByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = isAlnum(b) || b == '_' || b == '-' || b == '.' || b == '+' || b == '/' || b == '='
	}
	return
}()

// afterName marks the bytes that may follow a key's name: a separator, a
// closing quote, a space before the separator, an escape.
var afterName = func() (t [256]bool) {
	for _, c := range []byte("=:\"'%,\\") {
		t[c] = true
	}
	return
}()

// Byte classes for the scan's dispatch.
const (
	clSep      = iota // nothing starts here
	clWord            // a letter or '_'
	clDigit           // 0-9
	clNumStart        // '+' or '(': may start a phone number
	clDash            // '-': may start a PEM block
	clAt              // '@'
	clPercent         // '%': %40 (@) or %2B (+)
	clColon           // ':' may start :// (userinfo)
	clQuote           // '"' or '\'': may start a quoted key
)

var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		switch {
		case isLetter(b) || b == '_':
			t[c] = clWord
		case isDigit(b):
			t[c] = clDigit
		case b == '+' || b == '(':
			t[c] = clNumStart
		case b == '-':
			t[c] = clDash
		case b == '@':
			t[c] = clAt
		case b == '%':
			t[c] = clPercent
		case b == ':':
			t[c] = clColon
		case b == '"' || b == '\'':
			t[c] = clQuote
		}
	}
	return
}()

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isAlnum(c byte) bool  { return isDigit(c) || isLetter(c) }
func isHex(c byte) bool    { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

// isIdent marks the bytes of a word: letters, digits, '_'.
func isIdent(c byte) bool { return isAlnum(c) || c == '_' }

// wordStart reports whether a word begins at i: the byte before is not part
// of a word, or ends a percent-escape. (Numbers have their own, stricter
// rule: numBoundary.)
func wordStart(s string, i int) bool {
	if i == 0 {
		return true
	}
	p := s[i-1]
	if isIdent(p) {
		// A percent-escape ends a word: k%3Dsk_live_…
		return i >= 3 && s[i-3] == '%' && isHex(s[i-2]) && isHex(p)
	}
	return true
}

func skipWord(s string, i int) int {
	j := i + 1
	for j < len(s) && isIdent(s[j]) {
		j++
	}
	return j
}

// equalFold compares ASCII case-insensitively; b must be lower case.
func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x := a[i]
		if x >= 'A' && x <= 'Z' {
			x |= 0x20
		}
		if x != b[i] {
			return false
		}
	}
	return true
}

func hasPrefixFold(s, p string) bool { return len(s) >= len(p) && equalFold(s[:len(p)], p) }

// mayHoldSecret is a cheap first look: every detector needs a digit, '@',
// '%', '=', ':', a quote, a '-----' run, a word of 16 or more bytes, or one of
// the authentication scheme words. Texts without any pass as they are.
// Token bytes, most of a text, are counted in a loop of their own.
func mayHoldSecret(s string) bool {
	run := 0 // bytes of the current token
	for i := 0; i < len(s); i++ {
		if preClass[s[i]] == preToken {
			j := i + 1
			for j < len(s) && preClass[s[j]] == preToken {
				j++
			}
			if run += j - i; run >= 16 {
				return true
			}
			if i = j; i == len(s) {
				return false
			}
		}
		k := preClass[s[i]]
		switch {
		case k&preTrigger != 0:
			return true
		case k&preDash != 0:
			if len(s)-i >= 5 && s[i+1:i+5] == "----" {
				return true // a PEM block
			}
			run++ // '-' belongs to tokens too (the length is judged at a token byte)
			continue
		case k&preSpace != 0 && run >= 4 && run <= 16:
			// A scheme word ends here: Bearer, Basic, Digest…
			if w := s[i-run:]; schemeStart[w[0]] && startsScheme(w) {
				return true
			}
		}
		run = 0
	}
	return false
}

// Byte classes for mayHoldSecret.
const (
	preToken   = 1 << iota // part of a token: letters, digits, _ . / +
	preTrigger             // may start a secret on its own: digits, @ % = : quotes
	preDash                // '-': part of a token, may start a PEM block
	preSpace               // whitespace or '\\' (an escape) after a scheme word
)

var preClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		switch {
		case isDigit(b) || b == '@' || b == '%' || b == '=' || b == ':' || b == '"' || b == '\'':
			t[c] = preTrigger
		case isIdent(b) || b == '.' || b == '/' || b == '+':
			t[c] = preToken
		case b == '-':
			t[c] = preDash
		case b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\\':
			t[c] = preSpace
		}
	}
	return
}()

// bstr views b as a string without copying; b must not change while the
// string is in use.
func bstr(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// sbytes views s as bytes without copying; they must not be modified.
func sbytes(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
