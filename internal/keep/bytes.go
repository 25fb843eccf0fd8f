package keep

import "unsafe"

// Byte classes for RandomLooking.
const (
	clSep   uint8 = 1 << iota // anything but a letter or a digit
	clDigit                   // 0-9
	clUpper                   // A-Z
	clLower                   // a-z
)

var class = func() (t [256]uint8) {
	for c := range t {
		t[c] = clSep
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = clDigit
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = clUpper
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = clLower
	}
	return
}()

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isAlnum(c byte) bool  { return isDigit(c) || isLetter(c) }
func isHex(c byte) bool    { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

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

// bstr views b as a string without copying; b must not change while the
// string is in use.
func bstr(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
