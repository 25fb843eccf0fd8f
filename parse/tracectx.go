package parse

// ValidTraceID reports whether s is a W3C Trace Context trace-id: 32
// lowercase hex digits, not all zero.
func ValidTraceID(s string) bool { return lowerHexID(s, 32) }

// ValidSpanID reports whether s is a W3C Trace Context parent-id (a span
// id): 16 lowercase hex digits, not all zero.
func ValidSpanID(s string) bool { return lowerHexID(s, 16) }

func lowerHexID(s string, n int) bool {
	if len(s) != n {
		return false
	}
	zero := true
	for i := 0; i < n; i++ {
		c := s[i]
		switch {
		case c == '0':
		case c >= '1' && c <= '9', c >= 'a' && c <= 'f':
			zero = false
		default:
			return false
		}
	}
	return !zero
}
