package redact

import (
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// Customer values: e-mail addresses, card numbers, IBANs and phone numbers.
// Each is confirmed by what makes it one — a domain with a real top-level
// label, the Luhn check, the mod-97 check, libphonenumber's metadata — so
// the many numbers of ordinary error texts (timestamps, IP addresses and
// ports, versions, offsets, ISBNs, order numbers) survive.

// atSign handles an '@' (w = 1) or "%40" (w = 3) at i: an e-mail address
// around it, or the userinfo of a scheme-less URL (user:password@host).
// package@version and git remotes (git@host:org/repo) are not addresses.
func (sc *scanner) atSign(i, w int) (from, to int, ph string, ok bool) {
	s := sc.s
	// The local part runs back from the '@'; the run cache (runs.go) keeps
	// its start, so a%40a%40… is read back once, not from every "%40".
	l := sc.back(&sc.localRun, &localClass, i)
	d := i + w
	e := d
	for e < len(s) && (isAlnum(s[e]) || s[e] == '-' || s[e] == '.') {
		e++
	}
	sc.work += 2*(e-d) + 1 // the domain ends at the next '@' or '%' at the latest
	for e > d && (s[e-1] == '.' || s[e-1] == '-') {
		e--
	}
	dom := s[d:e]
	if dom == "" || !isAlnum(dom[0]) {
		return 0, 0, "", false
	}
	// user:password@host, without a scheme.
	if l < i && l > 0 && s[l-1] == ':' {
		u := sc.back(&sc.userRun, &userClass, l-1)
		if u < l-1 && (u == 0 || s[u-1] != '/') {
			return u, i, PhUserinfo, true
		}
	}
	if l == i || !emailDomain(dom) {
		return 0, 0, "", false
	}
	if e < len(s) && s[e] == ':' && e+1 < len(s) && !isDigit(s[e+1]) && s[e+1] != ' ' {
		return 0, 0, "", false // git@github.com:org/repo.git
	}
	return l, e, PhEmail, true
}

func localByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// emailDomain: two or more labels, the last of two or more letters.
func emailDomain(d string) bool {
	dot := strings.LastIndexByte(d, '.')
	if dot <= 0 || len(d)-dot-1 < 2 || strings.Contains(d, "..") {
		return false
	}
	for k := dot + 1; k < len(d); k++ {
		if !isLetter(d[k]) {
			return false
		}
	}
	return true
}

// numBoundary reports whether a number may start at i: not inside a word,
// and not glued to one by '-', '_', '.', '/' or '#' (ORD-2026-000123,
// build_4155552671, v1.2).
func numBoundary(s string, i int) bool {
	if i == 0 {
		return true
	}
	p := s[i-1]
	if i >= 3 && s[i-3] == '%' && isHex(s[i-2]) && isHex(p) {
		return true // after a percent-escape: card%204111…
	}
	if isIdent(p) {
		return false
	}
	// A ':' is no glue: a port is too short for a phone or a card, and
	// caller:07700 900873 or tel:+44… hold one.
	return !((p == '-' || p == '_' || p == '.' || p == '/' || p == '#') && i >= 2 && isIdent(s[i-2]))
}

// Separator kinds seen in a number.
const (
	sepSpace = 1 << iota
	sepDash
	sepDot
	sepSlash
	sepParen
)

// unicodeSep reports a separator of typeset numbers at j: a no-break,
// narrow no-break or thin space (French groups its digits with them), or
// a Unicode hyphen, dash or minus. It returns its kind and width in bytes.
func unicodeSep(s string, j int) (kind, w int) {
	var b1, b2 byte
	if j+1 < len(s) {
		b1 = s[j+1]
	}
	if j+2 < len(s) {
		b2 = s[j+2]
	}
	return utf8Sep(s[j], b1, b2)
}

// utf8Sep is unicodeSep on the first three bytes of a separator (0 past
// the text's end).
func utf8Sep(b0, b1, b2 byte) (kind, w int) {
	switch {
	case b0 == 0xC2 && b1 == 0xA0:
		return sepSpace, 2
	case b0 != 0xE2:
		return 0, 1
	case b1 == 0x80 && (b2 == 0xAF || b2 == 0x89 || b2 == 0x8A):
		return sepSpace, 3
	case b1 == 0x80 && b2 >= 0x90 && b2 <= 0x95, b1 == 0x88 && b2 == 0x92:
		return sepDash, 3
	}
	return 0, 1
}

// percentUnicodeSep is unicodeSep for a separator percent-encoded
// (grpc-message, a URL): %C2%A0, %E2%80%AF, %E2%80%91, ….
func percentUnicodeSep(s string, j int) (kind, w int) {
	var b [3]byte
	n := 0
	for k := j; n < 3 && k+2 < len(s) && s[k] == '%' && isHex(s[k+1]) && isHex(s[k+2]); k += 3 {
		b[n] = unhex(s[k+1])<<4 | unhex(s[k+2])
		n++
	}
	if n < 2 || b[0] < 0xC2 {
		return 0, 1
	}
	kind, bw := utf8Sep(b[0], b[1], b[2])
	if kind == 0 || bw > n {
		return 0, 1
	}
	return kind, 3 * bw
}

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// numberAt reads a run of digits and separators at i (a '+', "%2B", '(' or
// a digit) and tells whether it is a card or a phone number.
func (sc *scanner) numberAt(i int) (int, string, bool) {
	s := sc.s
	budget := &sc.phones
	j := i
	plus := false
	switch {
	case s[j] == '+':
		plus = true
		j++
	case s[j] == '%':
		plus = true
		j += 3
	}
	var dig [20]byte
	var groups [12]uint8
	var ends [12]int   // where each group ends in s
	var sepsAt [12]int // the separators between the digits up to each group's end
	nd, ng, cur, seps, pending, run := 0, 0, 0, 0, 0, 0
	end := j
	for j < len(s) {
		c := s[j]
		if isDigit(c) {
			if nd == len(dig) {
				break // longer than a phone or a card: what came first may be one
			}
			dig[nd] = c
			nd++
			seps |= pending // separators count only between digits
			pending = 0
			cur++
			j++
			end = j
			run = 0
			continue
		}
		w, kind := 1, 0
		switch {
		case c == ' ':
			kind = sepSpace
		case c == '-':
			kind = sepDash
		case c == '.':
			kind = sepDot
		case c == '/':
			kind = sepSlash
		case c == '(' || c == ')':
			kind = sepParen
		case c == '%' && j+2 < len(s) && s[j+1] == '2' && s[j+2] == '0':
			kind, w = sepSpace, 3
		case c == '%':
			kind, w = percentUnicodeSep(s, j)
		case c >= 0xC2:
			kind, w = unicodeSep(s, j)
		}
		if kind == 0 || run == 2 {
			break
		}
		if cur > 0 {
			if ng == len(groups) {
				break
			}
			groups[ng] = uint8(cur)
			ends[ng] = j
			sepsAt[ng] = seps
			ng++
			cur = 0
		}
		pending |= kind
		run++
		j += w
	}
	sc.work += j - i + 1 // at most 20 digits and 12 groups
	if cur > 0 && ng < len(groups) {
		groups[ng] = uint8(cur)
		ends[ng] = end
		sepsAt[ng] = seps
		ng++
	}
	if nd < 7 {
		return 0, "", false
	}
	// The whole run first, then without its last groups: a number can be
	// followed by another (+44 7700 900461 2 times, card 4111… 12/27).
	for k := ng; k >= 1; k-- {
		n := 0
		for _, c := range groups[:k] {
			n += int(c)
		}
		if n < 7 {
			break
		}
		d, g, e, seps := dig[:n], groups[:k], ends[k-1], sepsAt[k-1]
		if e < len(s) {
			switch c := s[e]; {
			case isIdent(c), c == '@':
				continue // 2026-12-01T06…, 123abc, x@1.2.3
			case (c == ':' || c == '.' || c == ',') && e+1 < len(s) && isDigit(s[e+1]):
				continue // a time, a port, a decimal
			}
		}
		if !plus && n == 9 && validSSN(d) && (k == 3 && g[0] == 3 && g[1] == 2 && seps == sepDash || sc.ssnLabelled(i) &&
			(k == 1 || k == 3 && g[0] == 3 && g[1] == 2 && seps&^(sepSpace|sepDash|sepDot) == 0)) {
			return e, PhSSN, true
		}
		if !plus && seps&^(sepSpace|sepDash) == 0 && n >= 13 && d[0] >= '2' && d[0] <= '6' && luhn(d) {
			return e, PhCard, true
		}
		if !plus && notAPhone(d, g, seps) {
			continue
		}
		if *budget <= 0 {
			// Past the text's budget of library checks, a number that
			// survived the filters above counts as a phone: the cost of a
			// text stays bounded, and the error is on the safe side.
			if phoneShaped(d, plus, g) {
				return e, PhPhone, true
			}
			continue
		}
		if phoneShaped(d, plus, g) {
			*budget--
			if isPhone(d, plus) {
				return e, PhPhone, true
			}
		}
	}
	return 0, "", false
}

// notAPhone recognises the numbers that look like phones to a pattern but
// are dates, IP addresses, versions or ISBNs.
func notAPhone(d []byte, g []uint8, seps int) bool {
	if len(g) >= 2 && g[0] == 4 && (d[0] == '1' && d[1] == '9' || d[0] == '2' && d[1] == '0') && seps&(sepDash|sepSlash|sepDot) != 0 {
		return true // 2026-12-01 06, 2026/12/01
	}
	if len(g) >= 3 && g[0] <= 2 && g[1] <= 2 && g[2] == 4 && seps&(sepDash|sepSlash|sepDot) != 0 {
		return true // 01/12/2026, 01.12.2026 12
	}
	if seps&sepDot != 0 && len(g) >= 3 && !frenchDotted(d, g) {
		short := true
		for _, n := range g {
			if n > 3 {
				short = false
			}
		}
		if short {
			return true // 192.168.100.200, 10.20.300.4000 versions
		}
	}
	if len(d) == 13 && d[0] == '9' && d[1] == '7' && (d[2] == '8' || d[2] == '9') {
		return true // ISBN-13
	}
	if len(d) == 10 && len(g) == 4 && seps == sepDash && isbn10(d) {
		return true // ISBN-10 with its hyphens
	}
	return false
}

// frenchDotted reports the French national format 0X.XX.XX.XX.XX: five
// groups of two digits, the first starting with the trunk 0 (an IPv4
// address has four groups).
func frenchDotted(d []byte, g []uint8) bool {
	if len(g) != 5 || d[0] != '0' {
		return false
	}
	for _, n := range g {
		if n != 2 {
			return false
		}
	}
	return true
}

// phoneShaped reports the digit counts isPhone can call valid. g are the
// digit groups: nine digits without a trunk 0 (Spain) count only when
// grouped as Spanish numbers are (612 345 678, 612 34 56 78, 91 123 45 67).
func phoneShaped(d []byte, plus bool, g []uint8) bool {
	n := len(d)
	return plus && n >= 8 && n <= 15 || n >= 10 && n <= 17 && d[0] == '0' && d[1] == '0' ||
		n >= 9 && n <= 12 && d[0] == '0' || n == 10 && d[0] >= '2' || n == 11 && d[0] == '1' ||
		n == 9 && d[0] >= '6' && spanishGrouped(d, g)
}

// spanishGrouped reports the groupings of Spanish numbers, 3-3-3, 3-2-2-2
// and 2-3-2-2; not three round numbers (a list: 600 300 150, 640 480 320).
func spanishGrouped(d []byte, g []uint8) bool {
	switch len(g) {
	case 3:
		return g[0] == 3 && g[1] == 3 && !(d[2] == '0' && d[5] == '0' && d[8] == '0')
	case 4:
		return g[0] == 3 && g[1] == 2 && g[2] == 2 || g[0] == 2 && g[1] == 3 && g[2] == 2
	}
	return false
}

// phoneChecks is how many numbers of one text are checked against
// libphonenumber's metadata (up to ~10 µs each); later ones that pass the
// filters are taken for phones.
const phoneChecks = 3

// PhoneRegions are the regions whose national formats (with the trunk
// prefix 0) are checked for numbers written without a country code. A
// number with a country code is checked against every region.
var PhoneRegions = []string{"GB", "DE", "FR", "NL", "IT", "ES", "AT", "CH", "AU", "IN"}

// isPhone asks libphonenumber whether the digits form a valid number: with
// a country code (+, or 00), in a national format of PhoneRegions (leading
// 0), as a ten-digit North American, Indian or Italian mobile number, or
// as a grouped nine-digit Spanish number (Spain has no trunk prefix).
func isPhone(d []byte, plus bool) bool {
	var buf [24]byte
	n := len(d)
	switch {
	case plus && n >= 8 && n <= 15:
		return validPhone(append(append(buf[:0], '+'), d...), "ZZ")
	case n >= 10 && n <= 17 && d[0] == '0' && d[1] == '0':
		return validPhone(append(append(buf[:0], '+'), d[2:]...), "ZZ")
	case n >= 9 && n <= 12 && d[0] == '0':
		return validNational(d[1:])
	case n == 10 && d[0] >= '2':
		return validPhone(d, "US") || d[0] >= '6' && validPhone(d, "IN") || d[0] == '3' && validIn(d, "IT")
	case n == 9 && d[0] >= '6':
		return validIn(d, "ES")
	case n == 11 && d[0] == '1':
		return validPhone(append(append(buf[:0], '+'), d...), "ZZ")
	}
	return false
}

// validNational reports whether nsn (a national number without its trunk
// 0) is valid in one of PhoneRegions. The number is parsed once and only
// its country code changes from region to region: asking the library to
// parse it per region cost about 4 µs a region.
func validNational(nsn []byte) bool {
	var v uint64
	for _, c := range nsn {
		v = v*10 + uint64(c-'0')
	}
	for _, r := range PhoneRegions {
		cc := int32(phonenumbers.GetCountryCodeForRegion(r))
		if cc == 0 {
			continue
		}
		num := v
		lead := false
		if r == "IT" { // Italian landlines keep their 0 in the number itself
			lead = true
		}
		p := phonenumbers.PhoneNumber{CountryCode: &cc, NationalNumber: &num, ItalianLeadingZero: &lead}
		if phonenumbers.IsValidNumberForRegion(&p, r) {
			return true
		}
	}
	return false
}

// validIn reports whether nsn, a national number without a trunk prefix,
// is valid in region (parsed once, as validNational does).
func validIn(nsn []byte, region string) bool {
	var v uint64
	for _, c := range nsn {
		v = v*10 + uint64(c-'0')
	}
	cc := int32(phonenumbers.GetCountryCodeForRegion(region))
	if cc == 0 {
		return false
	}
	p := phonenumbers.PhoneNumber{CountryCode: &cc, NationalNumber: &v}
	return phonenumbers.IsValidNumberForRegion(&p, region)
}

func validPhone(num []byte, region string) bool {
	p, err := phonenumbers.Parse(string(num), region)
	if err != nil {
		return false
	}
	if region == "ZZ" {
		return phonenumbers.IsValidNumber(p)
	}
	return phonenumbers.IsValidNumberForRegion(p, region)
}

// luhn is the check digit rule of card numbers (ISO/IEC 7812).
func luhn(d []byte) bool {
	sum, alt := 0, false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if alt {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		alt = !alt
	}
	return sum%10 == 0
}

func isbn10(d []byte) bool {
	sum := 0
	for i := 0; i < 10; i++ {
		sum += (10 - i) * int(d[i]-'0')
	}
	return sum%11 == 0
}

// ibanAt matches an IBAN at i, compact (DE89370400440532013000) or in
// groups of four (DE89 3704 0044 0532 0130 00), that passes the ISO 13616
// mod-97 check.
func (sc *scanner) ibanAt(i int) (int, bool) {
	s := sc.s
	if len(s)-i < 15 || !isUpper(s[i]) || !isUpper(s[i+1]) || !isDigit(s[i+2]) || !isDigit(s[i+3]) {
		return 0, false
	}
	var buf [34]byte
	n, grp, j, end := 0, 0, i, i
	for j < len(s) && n < len(buf) {
		c := s[j]
		if isUpper(c) || isDigit(c) {
			buf[n] = c
			n++
			grp++
			j++
			end = j
			continue
		}
		if c == ' ' && grp == 4 && j+1 < len(s) && (isUpper(s[j+1]) || isDigit(s[j+1])) {
			grp = 0
			j++
			continue
		}
		if c == '%' && grp == 4 && j+3 < len(s) && s[j+1] == '2' && s[j+2] == '0' && (isUpper(s[j+3]) || isDigit(s[j+3])) {
			grp = 0
			j += 3 // a space, percent-encoded
			continue
		}
		break
	}
	sc.work += j - i // at most 34 characters
	if n < 15 || end < len(s) && isIdent(s[end]) {
		return 0, false
	}
	if !mod97(buf[:n]) {
		return 0, false
	}
	return end, true
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// mod97: move the first four characters to the end, letters count as
// 10..35, and the number modulo 97 must be 1.
func mod97(b []byte) bool {
	r := 0
	add := func(c byte) {
		if isDigit(c) {
			r = (r*10 + int(c-'0')) % 97
			return
		}
		v := int(c-'A') + 10
		r = (r*100 + v) % 97
	}
	for _, c := range b[4:] {
		add(c)
	}
	for _, c := range b[:4] {
		add(c)
	}
	return r == 1
}
