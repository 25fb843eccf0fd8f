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
func keyValueAt(s string, i int) (vs, ve int, ok bool) {
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
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
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
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
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
		ve = lineEnd(s, vs, quoted || quote != 0)
	case c == '"' || c == '\'':
		vs = j + 1
		ve = quotedEnd(s, vs, c, j > 0 && s[j-1] == '\\')
	default:
		ve = vs
		for ve < len(s) && !valueEnd[s[ve]] {
			ve++
		}
	}
	for ve > vs && (s[ve-1] == '.' && sep == ':' || s[ve-1] == ' ') {
		ve-- // a sentence's full stop after "password: x."
	}
	if ve == vs || s[vs] == '[' && ve-vs >= 5 && s[ve-1] == ']' {
		return 0, 0, false // empty, or already a placeholder
	}
	return vs, ve, true
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
// (username="bob", response="…") belong to the value.
func lineEnd(s string, i int, quoted bool) int {
	esc := false
	for ; i < len(s); i++ {
		switch s[i] {
		case '\n', '\r':
			return i
		case '"':
			if i > 0 && s[i-1] == '\\' {
				esc = true
				continue
			}
			if quoted || esc {
				if i > 0 && s[i-1] == '\\' {
					continue
				}
				return i
			}
		}
	}
	return i
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
	k := j
	for {
		if k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r') {
			k++
			continue
		}
		if k+1 < len(s) && s[k] == '\\' && (s[k+1] == 't' || s[k+1] == 'n' || s[k+1] == 'r') {
			k += 2 // whitespace escaped in a JSON string
			continue
		}
		if k+2 < len(s) && s[k] == '%' && s[k+1] == '2' && s[k+2] == '0' {
			k += 3
			continue
		}
		break
	}
	if k == j || k >= len(s) {
		return 0, false, false
	}
	return k, line, true
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
func authSchemeAt(s string, i int) (vs, ve int, ok bool) {
	if !schemeStart[s[i]] {
		return 0, 0, false
	}
	k, line, ok := schemeWord(s[i:])
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
		if p == vs || p >= len(s) || s[p] != '=' {
			return 0, 0, false
		}
		return vs, lineEnd(s, vs, false), true
	}
	ve = vs
	digits, symbols := 0, 0
	for ve < len(s) {
		c := s[ve]
		switch {
		case isAlnum(c):
			if isDigit(c) {
				digits++
			}
		case c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=':
			symbols++
		case c == '%' && ve+2 < len(s) && isHex(s[ve+1]) && isHex(s[ve+2]):
			symbols++
			ve += 2
		default:
			goto end
		}
		ve++
	}
end:
	for ve > vs && (s[ve-1] == '.' || s[ve-1] == ',') {
		ve--
		symbols--
	}
	n := ve - vs
	if ve < len(s) && s[ve] == '"' && n > 0 && s[ve-1] == '=' {
		return 0, 0, false // a challenge parameter: Bearer realm="…"
	}
	w := s[i : i+len("bearer")]
	if equalFold(w[:5], "basic") || equalFold(w, "bearer") {
		// Bearer and Basic are followed by prose only in a few phrases
		// (Bearer token required, Basic plan): any other word of six or
		// more bytes is a credential, however plain it looks.
		if n < 6 || digits == 0 && symbols == 0 && proseAfterScheme(s[vs:ve]) {
			return 0, 0, false
		}
		return vs, ve, true
	}
	if n < 8 || digits == 0 && symbols == 0 && n < 20 {
		return 0, 0, false
	}
	return vs, ve, true
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
func pemAt(s string, i int) (int, bool) {
	if len(s)-i < 16 || s[i:i+11] != "-----BEGIN " {
		return 0, false
	}
	rest := s[i+11:]
	e := strings.Index(rest, "-----END ")
	if e < 0 {
		return len(s), true
	}
	tail := rest[e+9:]
	if f := strings.Index(tail, "-----"); f >= 0 {
		return i + 11 + e + 9 + f + 5, true
	}
	return len(s), true
}

// urlUserinfo finds user:password@ after "://" at i: the authority ends at
// the first '/', '?', '#' or space, unless what precedes it is no host
// (user:pa/ss@host): then the userinfo runs to the last '@' before the end
// of the URL.
func urlUserinfo(s string, i int) (from, to int, ok bool) {
	end := i
	for end < len(s) && !urlEnd[s[end]] {
		end++
	}
	auth := end
	for k := i; k < end; k++ {
		if c := s[k]; c == '/' || c == '?' || c == '#' {
			auth = k
			break
		}
	}
	at := strings.LastIndexByte(s[i:auth], '@')
	if at < 0 {
		if !hasPasswordColon(s[i:auth]) {
			return 0, 0, false
		}
		at = strings.LastIndexByte(s[i:end], '@')
		if at < 0 {
			return 0, 0, false
		}
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
