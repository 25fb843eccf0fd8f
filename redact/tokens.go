package redact

import "github.com/errtrail/errtrail/internal/keep"

// Tokens recognised by their own shape, wherever they stand: JSON Web
// Tokens, the key formats of well-known providers (fixed prefixes, as the
// field's secret scanners list them), and long random strings that mix
// upper case, lower case and digits. Hex digests, UUIDs and dash-joined ids
// are identifiers, not secrets, and are kept.

// jwtAt matches a JWT (or JWE) at i: base64url "eyJ…" parts joined by dots,
// at least three of them; the signature part may be empty. The first
// part's end comes from the run cache, and what follows it (the other
// parts) is read once per first part: the eyJ… words inside one part
// (eyJxxxxxxxxxx-eyJxxxxxxxxxx-…) share both.
func (sc *scanner) jwtAt(i int) (int, bool) {
	s := sc.s
	if len(s)-i < 16 || s[i:i+3] != "eyJ" {
		return 0, false
	}
	e1 := sc.fwd(&sc.jwt.first, &b64URL, i)
	if e1-i < 10 {
		return 0, false
	}
	t := &sc.jwt
	if !t.set || t.e1 != e1 || sc.uncached {
		// The parts after the first, as the first start's scan saw them.
		parts, j, bad := 1, e1, false
		for j < len(s) && s[j] == '.' && parts < 5 {
			k := j + 1
			for k < len(s) && isB64URL(s[k]) {
				k++
			}
			sc.work += k - j
			if parts == 1 && k-j-1 < 2 {
				bad = true
				break
			}
			parts++
			j = k
		}
		*t = jwtRun{first: t.first, e1: e1, end: j, ok: !bad && parts >= 3, set: true}
	}
	if !t.ok {
		return 0, false
	}
	return t.end, true
}

// jwtRun is what jwtAt found after the first part ending at e1.
type jwtRun struct {
	first run  // the first part's run of base64url bytes
	e1    int  // where that part ends
	end   int  // where the token ends
	ok    bool // the parts after the first make a token
	set   bool // e1, end and ok are set
}

func isB64URL(c byte) bool { return isAlnum(c) || c == '-' || c == '_' }

// keyFormat is one provider's key format: a fixed prefix and the least
// number of bytes after it.
type keyFormat struct {
	prefix string
	tail   int
}

// keyFormats, by provider; facts of their published token formats.
var keyFormats = []keyFormat{
	// AWS access key ids: four letters and 16 upper-case letters or digits.
	{"AKIA", 16}, {"ASIA", 16}, {"ABIA", 16}, {"ACCA", 16}, {"AGPA", 16}, {"AIDA", 16},
	{"AROA", 16}, {"AIPA", 16}, {"ANPA", 16}, {"ANVA", 16}, {"APKA", 16},
	// GitHub
	{"ghp_", 30}, {"gho_", 30}, {"ghu_", 30}, {"ghs_", 30}, {"ghr_", 30}, {"github_pat_", 20},
	// GitLab
	{"glpat-", 20}, {"gldt-", 20}, {"glrt-", 20}, {"glptt-", 20}, {"glsoat-", 20}, {"GR1348941", 20},
	// Slack
	{"xoxb-", 10}, {"xoxp-", 10}, {"xoxa-", 10}, {"xoxr-", 10}, {"xoxs-", 10}, {"xoxe-", 10}, {"xapp-", 10},
	// Stripe
	{"sk_live_", 10}, {"sk_test_", 10}, {"rk_live_", 10}, {"rk_test_", 10}, {"whsec_", 10}, {"pk_live_", 10},
	// OpenAI, Anthropic, other model APIs
	{"sk-proj-", 20}, {"sk-svcacct-", 20}, {"sk-admin-", 20}, {"sk-ant-", 20}, {"sk-", 32},
	{"gsk_", 30}, {"xai-", 30}, {"r8_", 30}, {"hf_", 30}, {"pplx-", 30},
	// Google
	{"AIza", 30}, {"ya29.", 20}, {"GOCSPX-", 20},
	// Package registries
	{"npm_", 30}, {"pypi-", 50}, {"oy2", 43},
	// Others
	{"SG.", 20}, {"shpat_", 20}, {"shpss_", 20}, {"shpca_", 20}, {"shppa_", 20},
	{"dop_v1_", 40}, {"doo_v1_", 40}, {"dor_v1_", 40}, {"glc_", 20}, {"glsa_", 20},
	{"hvs.", 20}, {"hvb.", 20}, {"pul-", 30}, {"PMAK-", 20}, {"lin_api_", 30}, {"figd_", 20},
	{"AGE-SECRET-KEY-1", 30}, {"sntrys_", 30}, {"sntryu_", 30}, {"sq0atp-", 20}, {"sq0csp-", 20},
	{"ATATT3", 30}, {"HRKU-", 20}, {"dp.pt.", 30}, {"dp.st.", 30}, {"pscale_tkn_", 30},
	{"pscale_pw_", 30}, {"EAACEdEose0cBA", 20}, {"api_key_", 12}, {"apikey_", 12},
	{"tok_live_", 10}, {"tok_test_", 10}, {"secret_", 30}, {"ntn_", 30}, {"rnd_", 30},
}

// keyByFirst indexes keyFormats by first byte.
var keyByFirst = func() (t [256][]keyFormat) {
	for _, k := range keyFormats {
		t[k.prefix[0]] = append(t[k.prefix[0]], k)
	}
	return
}()

// prefixedKeyAt matches a provider key at i (a word start: after a space,
// '=', '/', '?', a quote, …). The tail is base64url or dotted, and may be
// percent-encoded.
func (sc *scanner) prefixedKeyAt(i int) (int, bool) {
	s := sc.s
	for _, k := range keyByFirst[s[i]] {
		p := k.prefix
		if len(s)-i < len(p)+k.tail || s[i:i+len(p)] != p {
			continue
		}
		j := i + len(p)
		n := 0
		for j < len(s) {
			c := s[j]
			if isB64URL(c) || c == '.' || c == '+' || c == '/' || c == '=' {
				j++
				n++
				continue
			}
			if c == '%' && j+2 < len(s) && isHex(s[j+1]) && isHex(s[j+2]) {
				j += 3
				n++
				continue
			}
			break
		}
		sc.work += 2 * (j - i)
		for j > i+len(p) && (s[j-1] == '.' || s[j-1] == '=' && n < k.tail) {
			j--
			n--
		}
		if n >= k.tail {
			return j, true
		}
	}
	return 0, false
}

// randomRunAt matches a long random string at i: 32 or more bytes of the
// base64 alphabets with at least two upper-case letters, two lower-case
// letters and two digits — an AWS secret key, an opaque session token, a
// raw base64 key. Not: hex of any length (digests, SHAs, trace ids), UUIDs,
// dash-joined words, or an SRI digest after "sha256-".
//
// The words of one run (a-b-c-…, 1/2/3/…) are asked in turn, left to
// right: the run is read once (randRun) and each word's verdict comes from
// the counts of what follows it.
func (sc *scanner) randomRunAt(i int) (int, bool) {
	s := sc.s
	r := &sc.rr
	if !r.covers(s, i) || sc.uncached {
		r.read(sc, i)
	}
	r.advance(sc, i)
	j := r.end
	if j-i < 32 || r.up < 2 || r.lo < 2 || r.dig < 1 || r.dig < 2 && r.sym == 0 {
		return 0, false
	}
	w := s[i:j]
	if sriDigest(s[:i]) || sriDigest(w) {
		return 0, false
	}
	// Dash-joined words (a model or resource name) have short parts; a
	// random string's parts are long. A path or a name has a part that is
	// a plain lower-case word (services/T012…); random text has none.
	longest24 := r.longEnd-i >= 24 // longestPart(w) >= 24
	word := r.wordEnd-i >= 4       // hasWordPart(w)
	if r.dash > 0 && !longest24 || word {
		return 0, false
	}
	return j, true
}

// randRun is one run of randomRunAt's alphabet as read from its first
// word, and the counts of the bytes from the current word to its end.
type randRun struct {
	from, raw, end int // the first word; the run's end before '=' padding; its end after padding, trimmed
	ok             bool
	cur            int // the counts are those of s[cur:raw]
	up, lo, dig    int
	dash, sym      int
	// The end of the last part of s[from:end] between '-', '_' and '/' of
	// 24 or more bytes, and of the last part between '/', '-', '_' and '+'
	// of four or more lower-case letters; -1 when there is none. A part of
	// s[i:end] is as long as asked when one of these ends far enough
	// after i (for the second, when i starts a part).
	longEnd, wordEnd int
}

// covers reports whether the word at i is in the run read last, at a place
// where its counts apply: a part boundary for hasWordPart's separators.
func (r *randRun) covers(s string, i int) bool {
	if !r.ok || i < r.cur || i >= r.raw {
		return false
	}
	if i == r.from {
		return true
	}
	switch s[i-1] {
	case '/', '-', '_', '+':
		return true
	}
	return false
}

// read reads the run that starts at i.
func (r *randRun) read(sc *scanner, i int) {
	s := sc.s
	*r = randRun{from: i, cur: i, ok: true, longEnd: -1, wordEnd: -1}
	j := i
	for j < len(s) && randClass[s[j]] {
		r.count(s[j], 1)
		j++
	}
	r.raw = j
	for j < len(s) && s[j] == '=' { // padding ends the run
		j++
	}
	for j > i && (s[j-1] == '-' || s[j-1] == '_' || s[j-1] == '/') {
		j--
	}
	r.end = j
	// The parts, for longestPart and hasWordPart.
	n, start, lower := 0, i, true
	for p := i; p <= j; p++ {
		if p == j || s[p] == '/' || s[p] == '-' || s[p] == '_' || s[p] == '+' {
			if lower && p-start >= 4 {
				r.wordEnd = p
			}
			start, lower = p+1, true
		} else if c := s[p]; c < 'a' || c > 'z' {
			lower = false
		}
		if p == j || s[p] == '/' || s[p] == '-' || s[p] == '_' {
			if n >= 24 {
				r.longEnd = p
			}
			n = 0
		} else {
			n++
		}
	}
	sc.work += 3*(j-i) + 1
}

// advance moves the counts' start to i.
func (r *randRun) advance(sc *scanner, i int) {
	s := sc.s
	sc.work += i - r.cur + 1
	for ; r.cur < i; r.cur++ {
		r.count(s[r.cur], -1)
	}
}

func (r *randRun) count(c byte, d int) {
	switch {
	case c >= 'A' && c <= 'Z':
		r.up += d
	case c >= 'a' && c <= 'z':
		r.lo += d
	case isDigit(c):
		r.dig += d
	case c == '-' || c == '_':
		r.dash += d
	default: // '+' or '/'
		r.sym += d
	}
}

// hasWordPart reports a part between '/', '-', '_' or '+' of four or more
// lower-case letters only.
func hasWordPart(w string) bool {
	n, word := 0, true
	for i := 0; i <= len(w); i++ {
		if i == len(w) || w[i] == '/' || w[i] == '-' || w[i] == '_' || w[i] == '+' {
			if word && n >= 4 {
				return true
			}
			n, word = 0, true
			continue
		}
		n++
		if c := w[i]; c < 'a' || c > 'z' {
			word = false
		}
	}
	return false
}

func longestPart(w string) int {
	best, cur := 0, 0
	for i := 0; i < len(w); i++ {
		if w[i] == '-' || w[i] == '_' || w[i] == '/' {
			cur = 0
			continue
		}
		cur++
		if cur > best {
			best = cur
		}
	}
	return best
}

// sriDigest reports a subresource-integrity prefix (sha512-…): a digest
// of public content, not a secret.
func sriDigest(s string) bool {
	for _, p := range []string{"sha256-", "sha384-", "sha512-", "sha1-"} {
		if hasPrefixFold(s, p) || len(s) >= len(p) && equalFold(s[len(s)-len(p):], p) {
			return true
		}
	}
	return false
}

// shortKeyAt matches a short random key at i: a word of 8 to 31 letters
// and digits that mixes upper case, lower case and digits and changes
// between them at least every other byte (Kq3vZ8pLw2). Names (SendMessage2,
// iPhone12Pro), ULIDs and hex ids do not.
func (sc *scanner) shortKeyAt(i int) (int, bool) {
	s := sc.s
	j := i
	for j < len(s) && isAlnum(s[j]) {
		j++
	}
	sc.work += 2 * (j - i)
	if j-i < 8 || j-i >= 32 || j < len(s) && (s[j] == '_' || s[j] == '-' || s[j] == '@') {
		return 0, false
	}
	return j, keep.MixedRun(s[i:j])
}
