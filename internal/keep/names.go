package keep

// Names that name a secret: a key (password=, "token": …) or a header
// (Authorization, X-Api-Key) whose value is a credential, whatever it looks
// like. redact's text pass replaces such values; the emitters never read
// such a header for a caller.

// Strength says how surely a key name names a secret.
type Strength uint8

const (
	NameNone   Strength = iota
	NameWeak            // a secret only as name=value: key, pass, pin, session, auth
	NameStrong          // a secret after '=' or ':' and as a JSON key
)

// Secret-named keys, normalised: lower case, without '-', '_' and '.'.
var (
	strongNames = []string{
		"password", "passwd", "pwd", "passphrase", "secret", "token", "apikey", "sessionid", "sid",
		"authorization", "proxyauthorization", "cookie", "setcookie", "dpop", "otp", "cvv", "cvc", "ssn",
		"bearer", "jwt", "credential", "credentials", "signature", "privatekey", "jsessionid",
		"phpsessid", "aspsessionid", "connectsid", "clientassertion", "samlresponse",
		"itin", "socialsecuritynumber", "socialsecurityno",
	}
	// A key whose normalised name ends with one of these is a secret too:
	// client_secret, x-amz-security-token, aws_secret_access_key, db_password.
	strongSuffixes = []string{
		"password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey", "secretkey",
		"privatekey", "signingkey", "sessionkey", "masterkey", "sessionid", "cookie", "authorization",
		"credential", "credentials", "signature", "secretaccesskey", "ssn",
	}
	weakNames = []string{"key", "pass", "pin", "session", "auth", "sig", "passcode"}
)

// SecretName tells whether a key name names a secret.
func SecretName(name string) Strength {
	if len(name) < 2 || len(name) > 64 {
		return NameNone
	}
	if !nameTails.match(name) {
		return NameNone // every name below ends with one of a few letter triples
	}
	var buf [64]byte
	n := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '-' || c == '_' || c == '.':
			continue
		case c >= 'A' && c <= 'Z':
			c |= 0x20
		}
		buf[n] = c
		n++
	}
	if n == 0 {
		return NameNone
	}
	norm := bstr(buf[:n]) // a view of the stack buffer, compared only
	if n < len(exactByLen) {
		for _, e := range exactByLen[n] {
			if e.name == norm {
				return e.strength
			}
		}
	}
	for _, w := range strongSuffixes {
		if len(norm) > len(w) && norm[len(norm)-1] == w[len(w)-1] && norm[len(norm)-len(w):] == w {
			return NameStrong
		}
	}
	return NameNone
}

type namedStrength struct {
	name     string
	strength Strength
}

// exactByLen holds the exact names by length.
var exactByLen = func() (t [24][]namedStrength) {
	for _, w := range weakNames {
		t[len(w)] = append(t[len(w)], namedStrength{w, NameWeak})
	}
	for _, w := range strongNames {
		t[len(w)] = append(t[len(w)], namedStrength{w, NameStrong})
	}
	return
}()

// nameTails holds the last three letters of the names and suffixes above.
var nameTails = func() (t tailSet) {
	for _, l := range [][]string{strongNames, strongSuffixes, weakNames} {
		for _, w := range l {
			t.add(w)
		}
	}
	return
}()

// tailSet is a set of three-letter word endings, a bit each.
type tailSet [26*26*26/64 + 1]uint64

func tailIndex(a, b, c byte) (int, bool) {
	a, b, c = a|0x20, b|0x20, c|0x20
	if a < 'a' || a > 'z' || b < 'a' || b > 'z' || c < 'a' || c > 'z' {
		return 0, false
	}
	return int(a-'a')*676 + int(b-'a')*26 + int(c-'a'), true
}

func (t *tailSet) add(w string) {
	if k, ok := tailIndex(w[len(w)-3], w[len(w)-2], w[len(w)-1]); ok {
		t[k>>6] |= 1 << (k & 63)
	}
}

// match reports whether the last three letters of name, separators
// ('-', '_', '.') skipped, are a tail of the set.
func (t *tailSet) match(name string) bool {
	var tail [3]byte
	n := 0
	for i := len(name) - 1; i >= 0 && n < 3; i-- {
		c := name[i]
		if c == '-' || c == '_' || c == '.' {
			continue
		}
		n++
		tail[3-n] = c
	}
	if n < 3 {
		return false
	}
	k, ok := tailIndex(tail[0], tail[1], tail[2])
	return ok && t[k>>6]&(1<<(k&63)) != 0
}

// quotedEnd returns the end of a quoted value starting at i: the closing
// quote q, skipping escapes (\t, \"). A value whose opening quote was
// itself escaped (\"token\":\"…\" inside a JSON string) ends at the

// SensitiveHeader reports whether an HTTP header or gRPC metadata entry
// carries a credential or a session, so that its value is never kept:
// Authorization, Cookie, DPoP, X-Api-Key and any name that names a secret
// (X-Auth-Token, X-Amz-Security-Token, X-Session-Id, …).
func SensitiveHeader(name string) bool {
	// WWW-Authenticate and Proxy-Authenticate carry a challenge, not a
	// credential, and say why authentication failed: they name no secret.
	return len(name) >= 3 && SecretName(name) != NameNone
}
