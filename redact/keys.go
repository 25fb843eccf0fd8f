package redact

import (
	"strings"

	"github.com/errtrail/errtrail/internal/keep"
)

// Detectors that know their context: the value of a secret-named key,
// the credential after an authentication scheme, PEM blocks and the
// userinfo of a URL. Their rule: the context decides, whatever the value
// looks like, so a six-character session id is caught as surely as a JWT.

// keyValueAt reports the value span of a secret-named key starting at i:
// password=…, api_key: …, "token": "…", 'secret'='…', \"sid\":\"…\",
// ["X-Api-Key", "…"] and header lines (Cookie: …, to the end of the line).
func (sc *scanner) keyValueAt(i int) (vs, ve int, ok bool) {
	s := sc.s
	j := i
	var quote byte
	pair := false
	if c := s[j]; c == '"' || c == '\'' {
		quote = c
		pair = j > 0 && (s[j-1] == '[' || j > 1 && s[j-1] == ' ' && s[j-2] == '[')
		j++
	}
	ns := j
	for j < len(s) && j-ns <= 64 && (isIdent(s[j]) || s[j] == '-' || s[j] == '.') {
		j++
	}
	sc.work += j - i + 1
	ne := j
	for ne > ns && (s[ne-1] == '.' || s[ne-1] == '-') {
		ne--
	}
	if ne == ns || !isLetter(s[ns]) {
		return 0, 0, false
	}
	j = ne
	if quote != 0 {
		if j < len(s) && s[j] == '\\' {
			j++
		}
		if j >= len(s) || s[j] != quote {
			return 0, 0, false
		}
		j++
	} else if j < len(s) && s[j] == '\\' && j+1 < len(s) && s[j+1] == '"' {
		j += 2 // \"name\" inside an escaped JSON string
	}
	j = sc.fwd(&sc.spKey, &spaceTab, j)
	if j >= len(s) {
		return 0, 0, false
	}
	sep := s[j]
	switch {
	case sep == '=' || sep == ':':
		if j+1 < len(s) && (s[j+1] == '=' || sep == ':' && s[j+1] == ':') {
			return 0, 0, false // == comparisons, :: scopes
		}
		if sep == ':' && j+2 < len(s) && s[j+1] == '/' && s[j+2] == '/' {
			return 0, 0, false // a URL scheme
		}
		j++
	case sep == '%' && j+2 < len(s) && s[j+1] == '3' && s[j+2]|0x20 == 'd':
		sep = '='
		j += 3
	case sep == ',' && pair:
		j++
	default:
		return 0, 0, false
	}
	strength := secretName(s[ns:ne])
	switch {
	case strength == nameNone:
		return 0, 0, false
	case strength == nameWeak && sep != '=' && !pair:
		return 0, 0, false
	}
	j = sc.fwd(&sc.spSep, &spaceTab, j)
	if j < len(s) && s[j] == '\\' && j+1 < len(s) && s[j+1] == '"' {
		j++
	}
	if j >= len(s) {
		return 0, 0, false
	}
	vs = j
	switch c := s[j]; {
	case lineValued(s[ns:ne]):
		quoted := c == '"' || c == '\''
		if quoted {
			vs = j + 1
		}
		ve = sc.lineEnd(vs, quoted || quote != 0)
	case c == '"' || c == '\'':
		vs = j + 1
		ve = quotedEnd(s, vs, c, j > 0 && s[j-1] == '\\')
		sc.work += ve - vs + 1
	default:
		ve = vs
		for ve < len(s) && !valueEnd[s[ve]] {
			ve++
		}
		sc.work += ve - vs + 1
		ve = sc.schemeValueEnd(vs, ve)
		ve = sc.spacedNumberEnd(vs, ve)
	}
	e := ve
	for ve > vs && (s[ve-1] == '.' && sep == ':' || s[ve-1] == ' ') {
		ve-- // a sentence's full stop after "password: x."
	}
	sc.work += e - ve
	if ve == vs || s[vs] == '[' && ve-vs >= 5 && s[ve-1] == ']' {
		return 0, 0, false // empty, or already a placeholder
	}
	return vs, ve, true
}

// schemeValueEnd returns the end of an unquoted value s[vs:ve] of a
// secret-named key that is an authentication scheme word: the value is
// the credential after it (api_key=Bearer <token>, token: Basic <b64>,
// X-Api-Key: SSWS <token>), whatever the credential looks like, since the
// key already says what it is. Otherwise ve.
func (sc *scanner) schemeValueEnd(vs, ve int) int {
	s := sc.s
	n := ve - vs
	if n < 3 || n > 16 || ve >= len(s) || !schemeSpace[s[ve]] {
		return ve
	}
	w := s[vs:ve]
	k, line, ok := schemeWord(s[vs:])
	if !ok || k <= n {
		if !keySchemeWord(w) {
			return ve
		}
		k = skipSchemeSpace(s, ve) - vs
		if k == n || vs+k >= len(s) {
			return ve
		}
		line = false
	}
	cs := vs + k
	sc.work += k - n
	if line {
		return sc.lineEnd(cs, false)
	}
	if ce := sc.credEnd(cs); ce > cs {
		return ce
	}
	return ve
}

// spacedNumberEnd returns the end of an unquoted value s[vs:ve] of a
// secret-named key that is a number written in groups separated by
// single spaces (ssn: 603 41 7729, pin=12 34): the groups that follow,
// up to 20 digits in all. Otherwise ve.
func (sc *scanner) spacedNumberEnd(vs, ve int) int {
	s := sc.s
	if ve-vs > 20 || ve+1 >= len(s) || s[ve] != ' ' || !isDigit(s[ve+1]) {
		return ve
	}
	n := 0
	for p := vs; p < ve; p++ {
		if !isDigit(s[p]) {
			return ve
		}
		n++
	}
	e := ve
	for e+1 < len(s) && s[e] == ' ' && isDigit(s[e+1]) && n < 20 {
		p := e + 1
		for p < len(s) && isDigit(s[p]) {
			p++
			n++
		}
		if p < len(s) && !valueEnd[s[p]] || n > 20 {
			break // 12 34abc: the next word is no group
		}
		e = p
	}
	sc.work += e - ve + 1
	return e
}

// keySchemeWords are scheme words of vendors' API key headers, taken as
// schemes only after a secret-named key (X-Api-Key: SSWS …); in prose
// ("Key rotated") they are words.
var keySchemeWords = []string{"ssws", "key", "sso-key", "api-key", "apikey", "splunk", "jwt", "pat", "hawk", "mac", "hmac", "bot"}

func keySchemeWord(w string) bool {
	for _, x := range keySchemeWords {
		if equalFold(w, x) {
			return true
		}
	}
	return false
}

// valueEnd marks the bytes that end an unquoted value.
var valueEnd = func() (t [256]bool) {
	for _, c := range []byte(" \t\r\n&;,\"'<>()[]{}\\|") {
		t[c] = true
	}
	return
}()

// Secret names are declared in internal/keep (shared with emit).
type nameStrength = keep.Strength

const (
	nameNone   = keep.NameNone
	nameWeak   = keep.NameWeak
	nameStrong = keep.NameStrong
)

func secretName(name string) nameStrength { return keep.SecretName(name) }

// quotedEnd returns the end of a quoted value starting at i: the closing
// quote q, skipping escapes (\t, \"). A value whose opening quote was
// itself escaped (\"token\":\"…\" inside a JSON string) ends at the
// escaped closing quote.
func quotedEnd(s string, i int, q byte, escOpen bool) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case q:
			return i
		case '\n':
			return i
		case '\\':
			if i+1 < len(s) && s[i+1] == q && escOpen {
				return i
			}
			i++ // an escape: skip the escaped byte
		}
	}
	return min(i, len(s))
}

// lineEnd returns the end of a value that runs to the end of its line. A
// value inside a JSON string (quoted, or holding escaped quotes \") ends at
// the string's closing quote; the quotes of a plain header line
// (username="bob", response="…") belong to the value. Each of the three
// looks goes through its run cache (runs.go): several keys of one line
// whose values are all found to be placeholders share one scan of the line.
func (sc *scanner) lineEnd(i int, quoted bool) int {
	nl := sc.fwd(&sc.lineRun, &notNewline, i)
	if quoted {
		return min(nl, sc.nextQuote(&sc.uqRun, i, false))
	}
	// Unquoted: a quote ends the value only after an escaped one showed
	// that the line is inside a JSON string.
	eq := sc.nextQuote(&sc.eqRun, i, true)
	if eq >= nl {
		return nl
	}
	return min(nl, sc.nextQuote(&sc.uqRun, eq+1, false))
}

// lineValued names the keys whose value runs to the end of the line: header
// fields that hold several credentials (Cookie: a=1; b=2) or a scheme and
// its parameters (Authorization: Digest username="…", response="…").
func lineValued(name string) bool {
	return equalFold(name, "authorization") || equalFold(name, "proxy-authorization") ||
		equalFold(name, "cookie") || equalFold(name, "set-cookie")
}

// SensitiveHeader reports whether an HTTP header or gRPC metadata entry
// carries a credential or a session, so that its value is never kept:
// Authorization, Cookie, DPoP, X-Api-Key and any name that names a secret
// (X-Auth-Token, X-Amz-Security-Token, X-Session-Id, …).
func SensitiveHeader(name string) bool { return keep.SensitiveHeader(name) }

// Authentication schemes (RFC 9110 §11 and the IANA registry), lower case.
// The credential after them is replaced; for the schemes whose credential
// is a list of parameters, the rest of the line is.
var (
	schemesToken = []string{"bearer", "basic", "token", "negotiate", "ntlm", "dpop", "apikey", "gssapi", "vapid", "privatetoken"}
	schemesLine  = []string{"digest", "aws4-hmac-sha256", "hoba", "mutual", "scram-sha-1", "scram-sha-256", "oauth", "concealed"}
)

var schemeStart = func() (t [256]bool) {
	for _, l := range [][]string{schemesToken, schemesLine} {
		for _, w := range l {
			t[w[0]] = true
			t[w[0]-'a'+'A'] = true
		}
	}
	return
}()

// startsScheme reports whether s starts with a scheme word followed by
// whitespace (for mayHoldSecret).
func startsScheme(s string) bool {
	_, _, ok := schemeWord(s)
	return ok
}

// schemeWord matches a scheme word at the start of s and the whitespace
// after it: it returns the index of the credential and whether the scheme
// takes the rest of the line.
func schemeWord(s string) (cred int, line, ok bool) {
	j := 0
	for j < len(s) && j <= 16 && (isAlnum(s[j]) || s[j] == '-') {
		j++
	}
	if j < 4 || j > 16 || j >= len(s) || !schemeSpace[s[j]] {
		return 0, false, false
	}
	w := s[:j]
	if !schemeShape[j][s[0]|0x20] {
		return 0, false, false
	}
	found := false
	for pass, l := range [][]string{schemesToken, schemesLine} {
		for _, x := range l {
			if len(x) == j && equalFold(w, x) {
				found, line = true, pass == 1
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		return 0, false, false
	}
	k := skipSchemeSpace(s, j)
	if k == j || k >= len(s) {
		return 0, false, false
	}
	return k, line, true
}

// skipSchemeSpace skips the whitespace after a scheme word at j: spaces,
// tabs, newlines, their JSON escapes (also escaped twice) and %20.
func skipSchemeSpace(s string, j int) int {
	k := j
	for {
		if k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r') {
			k++
			continue
		}
		if s2 := k; s2 < len(s) && s[s2] == '\\' {
			// whitespace escaped in a JSON string, once or more (\t, \\t)
			for s2 < len(s) && s2-k < 8 && s[s2] == '\\' {
				s2++
			}
			if s2 < len(s) && (s[s2] == 't' || s[s2] == 'n' || s[s2] == 'r') {
				k = s2 + 1
				continue
			}
		}
		if k+2 < len(s) && s[k] == '%' && s[k+1] == '2' && s[k+2] == '0' {
			k += 3
			continue
		}
		return k
	}
}

// schemeShape[len][first letter] is set for the scheme words' shapes.
var schemeShape = func() (t [17][256]bool) {
	for _, l := range [][]string{schemesToken, schemesLine} {
		for _, w := range l {
			t[len(w)][w[0]] = true
		}
	}
	return
}()

// schemeSpace marks the bytes that may follow a scheme word: whitespace,
// a JSON escape, a percent-encoded space.
var schemeSpace = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\r\\%") {
		t[c] = true
	}
	return
}()

// authSchemeAt reports the credential after an authentication scheme word
// at i. A credential is told from prose ("Basic plan", "Token expired",
// "Bearer token required") by its shape: eight or more bytes with a digit,
// a symbol of the token68 alphabet, or twenty or more letters.
func (sc *scanner) authSchemeAt(i int) (vs, ve int, ok bool) {
	s := sc.s
	if !schemeStart[s[i]] {
		return 0, 0, false
	}
	k, line, ok := schemeWord(s[i:])
	sc.work += k + 17
	if !ok {
		return 0, 0, false
	}
	vs = i + k
	if line {
		// Digest username="…", response="…"; AWS4-HMAC-SHA256 Credential=…:
		// parameters, or it is prose ("digest mismatch").
		p := vs
		for p < len(s) && (isIdent(s[p]) || s[p] == '-') {
			p++
		}
		sc.work += p - vs
		if p == vs || p >= len(s) || s[p] != '=' {
			return 0, 0, false
		}
		return vs, sc.lineEnd(vs, false), true
	}
	// Where the credential ends does not depend on where it starts
	// (Bearer%20Bearer%20…): its end comes from the run cache.
	ve = sc.credEnd(vs)
	n := ve - vs
	if ve < len(s) && s[ve] == '"' && n > 0 && s[ve-1] == '=' {
		return 0, 0, false // a challenge parameter: Bearer realm="…"
	}
	w := s[i : i+len("bearer")]
	bb := equalFold(w[:5], "basic") || equalFold(w, "bearer")
	// Past these lengths the verdict is taken whatever the bytes: no prose
	// word after Bearer or Basic is longer than 14 bytes, and 20 bytes
	// make a credential after any scheme.
	switch {
	case bb && n > 14, !bb && n >= 20:
		return vs, ve, true
	case bb && n < 6, !bb && n < 8:
		return 0, 0, false
	}
	digits, symbols := 0, 0
	for p := vs; p < ve; p++ {
		switch c := s[p]; {
		case isDigit(c):
			digits++
		case c == '%' && p+2 < len(s) && isHex(s[p+1]) && isHex(s[p+2]):
			symbols++
			p += 2
		case !isAlnum(c):
			symbols++
		}
	}
	sc.work += n
	if digits == 0 && symbols == 0 && (!bb || proseAfterScheme(s[vs:ve])) {
		return 0, 0, false
	}
	return vs, ve, true
}

// credEnd returns the end of the credential that starts at vs: bytes of
// the token68 alphabet and percent-escapes, without trailing '.' and ','.
func (sc *scanner) credEnd(vs int) int {
	r := &sc.credRun
	if !(r.ok && vs >= r.from && vs <= r.to) || sc.uncached {
		s := sc.s
		j := vs
		for j < len(s) {
			if credClass[s[j]] {
				j++
				continue
			}
			if s[j] == '%' && j+2 < len(s) && isHex(s[j+1]) && isHex(s[j+2]) {
				j += 3
				continue
			}
			break
		}
		t := j
		for t > vs && (s[t-1] == '.' || s[t-1] == ',') {
			t--
		}
		sc.work += 2*(j-vs) + 1
		*r = run{vs, j, true}
		sc.credTrim = t
	}
	return max(sc.credTrim, vs)
}

// proseAfterScheme lists the words that follow Bearer or Basic in prose.
func proseAfterScheme(w string) bool {
	for _, p := range []string{"tokens", "authentication", "authorization", "scheme", "header", "headers",
		"required", "missing", "invalid", "expired", "credential", "credentials", "access", "format",
		"string", "prefix", "challenge", "validation", "version", "request", "requests", "should",
		"please", "cannot", "failed", "rejected", "malformed", "provided", "supplied", "present",
		"needed", "expected", "accepted", "allowed", "supported", "subscription", "account", "limits",
		"quota", "plan", "tier", "usage"} {
		if equalFold(w, p) {
			return true
		}
	}
	return false
}

// pemAt matches a PEM block at i: from -----BEGIN to the end of its
// -----END line, or to the end of the text when the block was cut.
func (sc *scanner) pemAt(i int) (int, bool) {
	s := sc.s
	if len(s)-i < 16 || s[i:i+11] != "-----BEGIN " {
		sc.work++
		return 0, false
	}
	end := len(s)
	rest := s[i+11:]
	if e := strings.Index(rest, "-----END "); e >= 0 {
		tail := rest[e+9:]
		if f := strings.Index(tail, "-----"); f >= 0 {
			end = i + 11 + e + 9 + f + 5
		}
	}
	sc.work += end - i // the block is replaced and skipped
	return end, true
}

// pemTailAt matches, at a word of 16 or more base64 bytes, the body of a
// PEM block whose BEGIN line was cut off (a message cut at its start, a
// header whose first line was dropped): base64 lines up to -----END …-----,
// which ends the match. Lines may be separated by newlines, their JSON
// escapes, folding white space or spaces. A word shorter than 16 bytes
// that is not the last line (prose) ends the block: the match starts
// after it. The run up to the END line and its last short word come from
// the run cache, so the words of one block share one look.
func (sc *scanner) pemTailAt(i int) (int, bool) {
	s := sc.s
	r := sc.pemRun
	e := sc.fwd(&sc.pemRun, &pemBody, i)
	if len(s)-e < 9 || s[e:e+9] != "-----END " {
		return 0, false
	}
	if sc.pemRun != r || sc.uncached {
		// A new run: find its last short word that is not its last line.
		sc.pemShort = -1
		for k := i; k < e; {
			for k < e && pemSpace(s, k) > 0 {
				k += pemSpace(s, k)
			}
			ws := k
			for k < e && pemSpace(s, k) == 0 {
				k++
			}
			if k > ws && k-ws < 16 && !pemOnlySpace(s, k, e) {
				sc.pemShort = ws
			}
		}
		sc.work += e - i
	}
	if sc.pemShort >= i {
		return 0, false
	}
	j := e + 9
	for j < len(s) && j-e < 80 && s[j] != '\n' && s[j] != '\\' {
		if s[j] == '-' && len(s)-j >= 5 && s[j:j+5] == "-----" {
			j += 5
			break
		}
		j++
	}
	sc.work += j - e
	return j, true
}

// pemSpace returns the length of the white space at k between a PEM
// block's lines: a space, tab, CR or LF, or one of their JSON escapes.
func pemSpace(s string, k int) int {
	switch s[k] {
	case ' ', '\t', '\r', '\n':
		return 1
	case '\\':
		if k+1 < len(s) && (s[k+1] == 'n' || s[k+1] == 'r' || s[k+1] == 't') {
			return 2
		}
		return 1
	}
	return 0
}

// pemOnlySpace reports that s[k:i] is white space only.
func pemOnlySpace(s string, k, i int) bool {
	for k < i {
		n := pemSpace(s, k)
		if n == 0 {
			return false
		}
		k += n
	}
	return true
}

// pemBody marks the bytes of a PEM block's lines and the space between.
var pemBody = classOf(func(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '=' || c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\\'
})

// urlUserinfo finds user:password@ after "://" at i: the authority ends at
// the first '/', '?', '#' or space, unless what precedes it is no host
// (user:pa/ss@host): then the userinfo runs to the last '@' before the end
// of the URL. The URL's end and its last '@' come from the run cache: the
// authorities of a URL that holds many "://" share them.
func (sc *scanner) urlUserinfo(i int) (from, to int, ok bool) {
	s := sc.s
	r := sc.urlRun
	end := sc.fwd(&sc.urlRun, &notURLEnd, i)
	if sc.urlRun != r {
		sc.urlAt = -2 // a new URL: its last '@' is not known yet
	}
	auth := end
	for k := i; k < end; k++ {
		if c := s[k]; c == '/' || c == '?' || c == '#' {
			auth = k
			break
		}
	}
	sc.work += 3*(auth-i) + 1
	at := strings.LastIndexByte(s[i:auth], '@')
	if at < 0 {
		if !hasPasswordColon(s[i:auth]) {
			return 0, 0, false
		}
		if sc.urlAt == -2 || sc.uncached {
			u := sc.urlRun
			sc.urlAt = strings.LastIndexByte(s[u.from:u.to], '@')
			if sc.urlAt >= 0 {
				sc.urlAt += u.from
			}
			sc.work += u.to - u.from
		}
		if sc.urlAt < i {
			return 0, 0, false
		}
		at = sc.urlAt - i
	}
	if at == 0 {
		return 0, 0, false
	}
	return i, i + at, true
}

func hasPasswordColon(a string) bool { return keep.HasPasswordColon(a) }

var urlEnd = func() (t [256]bool) {
	for _, c := range []byte(" \t\r\n\"'<>`") {
		t[c] = true
	}
	return
}()
