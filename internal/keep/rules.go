package keep

import "strings"

// Field paths and endpoints keep their structure: a person reading a row
// must still see which field was wrong or which route failed. The segments
// that look like values (an e-mail used as a map key, a customer id in a
// route, a token in a path) are replaced. The text pass that runs first in
// the decoder (redact.AppendText, with its libphonenumber check) is a hook,
// TextView, so that this rule needs nothing beyond the standard library.

const (
	PhSegValue = "{value}" // a value-like segment of a field path
	PhSegID    = "{id}"    // a value-like segment of an endpoint's path
)

// Placeholders, one per kind of value replaced.
const (
	PhSecret   = "[secret]"   // the value of a secret-named key
	PhToken    = "[token]"    // a credential after an authentication scheme
	PhJWT      = "[jwt]"      // a JSON Web Token
	PhKey      = "[key]"      // a provider key format or a long random string
	PhPEM      = "[pem]"      // a PEM block (private keys, certificates)
	PhUserinfo = "[userinfo]" // user:password in a URL or before @host
	PhEmail    = "[email]"
	PhPhone    = "[phone]"
	PhCard     = "[card]"
	PhIBAN     = "[iban]"
	PhSSN      = "[ssn]" // a US Social Security number or ITIN
)

// TextView is a text pass run before the structure rule: it returns s
// with credentials and customer values replaced by placeholders (a view
// the rule reads before the next call) and whether it replaced any. redact
// passes its AppendText; nil runs the structure rule alone.
type TextView func(s string) (string, bool)

// AppendPath appends the field path s (message.parts[0].text,
// /filters/features_all, contacts[alice@example.com].phone) with its
// value-like segments replaced by {value}.
func AppendPath(dst []byte, s string, text TextView) []byte {
	if s == "" {
		return dst
	}
	t := s
	if text != nil {
		if out, changed := text(s); changed {
			t = out
		}
	}
	if t == s && !anySegment(s, pathSep, false) {
		return append(dst, s...)
	}
	return appendSegments(dst, t, pathSep, false, PhSegValue)
}

// AppendEndpoint appends an endpoint URL with only what identifies the
// route: scheme, host, port and the path with value-like segments as {id}.
// Userinfo (with or without a scheme, and also when it holds an unencoded
// '/' or '@'), the query and the fragment are dropped. A host that looks
// random, or that text flags, becomes {host}.
func AppendEndpoint(dst []byte, s string, text TextView) []byte {
	if s == "" {
		return dst
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	rest := s
	if p := strings.Index(s, "://"); p > 0 && isScheme(s[:p]) {
		dst = append(dst, s[:p+3]...)
		rest = s[p+3:]
	}
	if rest == "" {
		return dst
	}
	host, path := rest, ""
	if rest[0] == '/' {
		host = ""
		path = rest
	} else if k := strings.IndexByte(rest, '/'); k >= 0 {
		host, path = rest[:k], rest[k:]
	}
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	} else if HasPasswordColon(host) {
		// user:pa/ss@host/path: the userinfo runs to the last '@'.
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			after := rest[at+1:]
			host, path = after, ""
			if k := strings.IndexByte(after, '/'); k >= 0 {
				host, path = after[:k], after[k:]
			}
		} else {
			host = "{host}"
		}
	}
	if host != "" {
		if validHost(host) && !flagged(host, text) {
			dst = append(dst, host...)
		} else {
			dst = append(dst, "{host}"...)
		}
	}
	if path == "" {
		return dst
	}
	t := path
	if text != nil {
		if out, changed := text(path); changed {
			t = out
		}
	}
	return appendSegments(dst, t, urlSep, true, PhSegID)
}

// flagged reports a host that looks random or that the text pass flags:
// an endpoint that is a token, a card number or an address.
func flagged(host string, text TextView) bool {
	if RandomLooking(host) {
		return true
	}
	if text == nil {
		return false
	}
	_, changed := text(host)
	return changed
}

func pathSep(c byte) bool { return c == '.' || c == '/' || c == '[' || c == ']' }

func urlSep(c byte) bool { return c == '/' || c == ':' }

// anySegment reports whether some segment of s is value-like.
func anySegment(s string, sep func(byte) bool, url bool) bool {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && !sep(s[i]) {
			continue
		}
		if valueLike(s[start:i], url) {
			return true
		}
		start = i + 1
	}
	return false
}

// appendSegments copies s, replacing value-like segments and placeholders
// of the text pass with ph.
func appendSegments(dst []byte, s string, sep func(byte) bool, url bool, ph string) []byte {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] == '[' {
			if n := placeholderAt(s[i:]); n > 0 {
				// What stands before the placeholder in its segment is part
				// of the same value (Bearer [token]): both go.
				dst = append(dst, ph...)
				i += n - 1
				start = i + 1
				continue
			}
		}
		if i < len(s) && !sep(s[i]) {
			continue
		}
		seg := s[start:i]
		if valueLike(seg, url) {
			dst = append(dst, ph...)
		} else {
			dst = append(dst, seg...)
		}
		if i < len(s) {
			dst = append(dst, s[i])
		}
		start = i + 1
	}
	return dst
}

var placeholders = []string{PhSecret, PhToken, PhJWT, PhKey, PhPEM, PhUserinfo, PhEmail, PhPhone, PhCard, PhIBAN, PhSSN}

func placeholderAt(s string) int {
	for _, p := range placeholders {
		if strings.HasPrefix(s, p) {
			return len(p)
		}
	}
	return 0
}

// valueLike tells a segment that holds a value from one that names a
// field or a route: a value has bytes no name has, is long, is a number
// longer than an index, mixes letters with many digits, or is hex.
func valueLike(seg string, url bool) bool {
	if seg == "" || seg == "*" || seg == "-" {
		return false
	}
	if len(seg) > 48 {
		return true
	}
	if len(seg) >= 8 && RandomLooking(seg) {
		return true
	}
	letters, digits, hexOnly := 0, 0, true
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case isDigit(c):
			digits++
		case isLetter(c):
			letters++
			if !isHex(c) {
				hexOnly = false
			}
		case c == '_' || c == '-' || c == '$' || c == '*':
			hexOnly = false
		case url && (c == '.' || c == '~'):
			hexOnly = false
		default:
			return true
		}
	}
	switch {
	case letters == 0:
		return digits > 4
	case len(seg) >= 20 && (digits > 0 || mixedCase(seg)):
		return true // a random token: services/T0123ABCD/B0456EFGH/aB3dE5…
	case hexOnly && len(seg) >= 8 && digits > 0:
		return true
	case digits >= 4 && !(url && isVersion(seg)):
		return true
	case digits > 0 && len(seg) >= 16:
		return true
	}
	return false
}

// isVersion: v1, v1.0, 2.6.0, v1beta2.
func isVersion(s string) bool {
	if s[0] == 'v' || s[0] == 'V' {
		s = s[1:]
	}
	return s != "" && isDigit(s[0]) && len(s) <= 12
}

func isScheme(s string) bool {
	if s == "" || !isLetter(s[0]) || len(s) > 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// validHost: a DNS name or IPv4 address, or [IPv6], with an optional port.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	if h[0] == '[' {
		e := strings.IndexByte(h, ']')
		if e < 0 {
			return false
		}
		for k := 1; k < e; k++ {
			if c := h[k]; !isHex(c) && c != ':' && c != '.' {
				return false
			}
		}
		return validPort(h[e+1:])
	}
	name := h
	if c := strings.IndexByte(h, ':'); c >= 0 {
		name = h[:c]
		if !validPort(h[c:]) {
			return false
		}
	}
	if name == "" {
		return false
	}
	for k := 0; k < len(name); k++ {
		if c := name[k]; !isAlnum(c) && c != '-' && c != '.' && c != '_' {
			return false
		}
	}
	return true
}

func validPort(p string) bool {
	if p == "" {
		return true
	}
	if p[0] != ':' || len(p) < 2 || len(p) > 6 {
		return false
	}
	for k := 1; k < len(p); k++ {
		if !isDigit(p[k]) {
			return false
		}
	}
	return true
}

func mixedCase(s string) bool {
	up, lo := false, false
	for i := 0; i < len(s); i++ {
		up = up || s[i] >= 'A' && s[i] <= 'Z'
		lo = lo || s[i] >= 'a' && s[i] <= 'z'
	}
	return up && lo
}

// RandomLooking reports a run of eight or more letters and digits that
// mixes upper case, lower case and digits and changes between them at
// least every other byte (Kq3vZ8pLw2): a short key or password, not a name
// (SendMessage2), a ULID (upper case only) or a hex id (no upper case).
func RandomLooking(s string) bool {
	start := 0
	var run uint8
	for i := 0; i <= len(s); i++ {
		f := clSep
		if i < len(s) {
			f = class[s[i]]
		}
		if f&(clUpper|clLower|clDigit) != 0 {
			run |= f
			continue
		}
		if run == clUpper|clLower|clDigit && i-start >= 8 && MixedRun(s[start:i]) {
			return true
		}
		run = 0
		start = i + 1
	}
	return false
}

// MixedRun reports a run that mixes upper case, lower case and digits and
// changes between them at least every other byte.
func MixedRun(w string) bool {
	up, lo, dig, changes := 0, 0, 0, 0
	prev := byte(0)
	for i := 0; i < len(w); i++ {
		var k byte
		switch c := w[i]; {
		case c >= 'A' && c <= 'Z':
			up++
			k = 1
		case c >= 'a' && c <= 'z':
			lo++
			k = 2
		default:
			dig++
			k = 3
		}
		if i > 0 && k != prev {
			changes++
		}
		prev = k
	}
	return up > 0 && lo > 0 && dig > 0 && 2*changes >= len(w)
}

// HasPasswordColon reports a ':' that is not followed by a port number.
func HasPasswordColon(a string) bool {
	c := strings.IndexByte(a, ':')
	if c < 0 {
		return false
	}
	for k := c + 1; k < len(a); k++ {
		if !isDigit(a[k]) {
			return true
		}
	}
	return false
}
