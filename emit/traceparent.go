package emit

// ParseTraceparent reads a W3C Trace Context traceparent header value
// (version-traceid-parentid-flags, e.g.
// 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01) and returns
// its trace id and parent id. A value that breaks the grammar (upper-case
// hex, an all-zero id, version ff, a version 00 value of another length)
// gives ok false and empty ids. Versions above 00 are read by their first
// four fields, as the specification asks of a reader of an older version.
func ParseTraceparent(v string) (traceID, spanID string, ok bool) {
	if len(v) < 55 || (len(v) > 55 && v[55] != '-') {
		return "", "", false
	}
	ver := v[:2]
	if !isLowerHex(ver) || ver == "ff" || (ver == "00" && len(v) != 55) {
		return "", "", false
	}
	if v[2] != '-' || v[35] != '-' || v[52] != '-' || !isLowerHex(v[53:55]) {
		return "", "", false
	}
	tr, sp := v[3:35], v[36:52]
	if !validHexID(tr, 32) || !validHexID(sp, 16) {
		return "", "", false
	}
	return tr, sp, true
}

// validHexID reports whether s is n lowercase hex digits, not all zero.
func validHexID(s string, n int) bool {
	if len(s) != n || !isLowerHex(s) {
		return false
	}
	for i := 0; i < n; i++ {
		if s[i] != '0' {
			return true
		}
	}
	return false
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
