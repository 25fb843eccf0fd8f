package redact

// US Social Security numbers (and ITINs, which share their shape): nine
// digits, area-group-serial. Written with dashes (536-22-8147) the shape is
// its own evidence: nothing else in error texts is three, two and four
// digits joined by dashes. Written with spaces or dots, or as nine bare
// digits, a number is an SSN only after a label that says so ("SSN",
// "SSN#", "ITIN", "Social Security number", "social security no."):
// nine bare digits are as often an order or account number.

// ssnAt matches DDD-DD-DDDD at i that is not part of a longer number
// (2026-536-22-8147-1 is not one) and has no all-zero group.
func (sc *scanner) ssnAt(i int) (int, bool) {
	s := sc.s
	sc.work += 4
	if len(s)-i < 11 || !isDigit(s[i+1]) || !isDigit(s[i+2]) || s[i+3] != '-' {
		return 0, false
	}
	sc.work += 8
	if !ssnShape(s[i : i+11]) {
		return 0, false
	}
	if i > 0 {
		p := s[i-1]
		if isDigit(p) || i >= 2 && isDigit(s[i-2]) && numGlue(p) {
			return 0, false
		}
	}
	e := i + 11
	if e < len(s) {
		c := s[e]
		if isAlnum(c) || e+1 < len(s) && isDigit(s[e+1]) && numGlue(c) {
			return 0, false
		}
	}
	return e, true
}

// numGlue marks the bytes that join the groups of one number.
func numGlue(c byte) bool { return c == '-' || c == '.' || c == '/' }

// ssnShape reports DDD-DD-DDDD with no all-zero group (the SSA never
// issues area 000, group 00 or serial 0000).
func ssnShape(w string) bool {
	if len(w) != 11 || w[3] != '-' || w[6] != '-' {
		return false
	}
	var d [9]byte
	n := 0
	for k := 0; k < 11; k++ {
		if k == 3 || k == 6 {
			continue
		}
		if !isDigit(w[k]) {
			return false
		}
		d[n] = w[k]
		n++
	}
	return validSSN(d[:])
}

// validSSN reports nine digits with no all-zero group.
func validSSN(d []byte) bool {
	return len(d) == 9 && !(d[0] == '0' && d[1] == '0' && d[2] == '0') && !(d[3] == '0' && d[4] == '0') &&
		!(d[5] == '0' && d[6] == '0' && d[7] == '0' && d[8] == '0')
}

// ssnLabelWord reports a word s[i:j] that labels a Social Security
// number: SSN, ITIN, SS# and "Social Security" (as two words or one).
func ssnLabelWord(s string, i, j int) bool {
	w := s[i:j]
	switch len(w) {
	case 2:
		return equalFold(w, "ss") && j < len(s) && s[j] == '#'
	case 3:
		return equalFold(w, "ssn")
	case 4:
		return equalFold(w, "ssns") || equalFold(w, "itin")
	case 8:
		// "Social Security", "social-security", "social_security"
		if !equalFold(w, "security") {
			return false
		}
		if i >= 9 && s[i-3:i] == "%20" {
			return equalFold(s[i-9:i-3], "social") // percent-encoded (grpc-message)
		}
		return i >= 7 && (s[i-1] == ' ' || s[i-1] == '-' || s[i-1] == '_') && equalFold(s[i-7:i-1], "social")
	case 14:
		return equalFold(w, "socialsecurity")
	case 20:
		return equalFold(w, "socialsecuritynumber")
	}
	return false
}

// ssnLabelLen marks the lengths of the label words.
var ssnLabelLen = [21]bool{2: true, 3: true, 4: true, 8: true, 14: true, 20: true}

// ssnLabelled reports whether a number at i follows an SSN label (the
// scanner's ssnLabel, where the last label word ended) with nothing but
// separators (also %20) and the words "number", "no", "nr", "num", "is"
// between.
func (sc *scanner) ssnLabelled(i int) bool {
	l := sc.ssnLabel
	if l <= 0 || i < l || i-l > 32 {
		return false
	}
	s := sc.s
	sc.work += i - l + 1
	for k := l; k < i; {
		c := s[k]
		if isLetter(c) {
			e := k
			for e < i && isLetter(s[e]) {
				e++
			}
			switch w := s[k:e]; {
			case equalFold(w, "number"), equalFold(w, "no"), equalFold(w, "nr"), equalFold(w, "num"), equalFold(w, "is"):
			default:
				return false
			}
			k = e
			continue
		}
		if c == '%' && k+2 < i && s[k+1] == '2' && s[k+2] == '0' {
			k += 3 // a percent-encoded space
			continue
		}
		if !ssnFiller[c] {
			return false
		}
		k++
	}
	return true
}

// ssnFiller marks the bytes between a label and its number.
var ssnFiller = func() (t [256]bool) {
	for _, c := range []byte(" \t:=#.'\"\\-_()[]") {
		t[c] = true
	}
	return
}()

// ssnInIdent reports an identifier that may hold an SSN the text pass
// must look at: the dashed shape anywhere (also glued to a word:
// user-536-22-8147), or a label word with nine or more digits
// (ssn-536228147, SSN#536228147).
func ssnInIdent(s string) bool {
	for i := 0; i+11 <= len(s); i++ {
		if isDigit(s[i]) && (i == 0 || !isDigit(s[i-1])) && ssnShape(s[i:i+11]) &&
			(i+11 == len(s) || !isDigit(s[i+11])) {
			return true
		}
	}
	for i := 0; i+2 <= len(s); i++ {
		if (s[i]|0x20 == 's' && s[i+1]|0x20 == 's') || (i+4 <= len(s) && equalFold(s[i:i+4], "itin")) {
			return true
		}
	}
	return false
}
