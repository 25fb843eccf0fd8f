package parse

import (
	"strings"
	"testing"
)

// TestBlankIsTrimSpaceEmpty: blank, the message_missing test without a
// call for the common text, says what strings.TrimSpace(s) == "" says,
// Unicode white space included.
func TestBlankIsTrimSpaceEmpty(t *testing.T) {
	for _, s := range []string{"", " ", "\t\r\n ", "\u00a0", " \u2003 ", "\u3000", "x", " x", "\u00a0x", "Rate limit exceeded",
		"\x85", "\x00", "\x7f", "\xff", "é", " \u200b"} {
		if got, want := blank(s), strings.TrimSpace(s) == ""; got != want {
			t.Errorf("blank(%q) = %v, want %v", s, got, want)
		}
	}
}
