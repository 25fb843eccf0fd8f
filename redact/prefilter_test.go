package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// mayHoldSecretRef is mayHoldSecret as it was before token bytes got a
// loop of their own, one byte class look per byte: the reference.
func mayHoldSecretRef(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		k := preClass[s[i]]
		if k == preToken {
			run++
			if run >= 16 {
				return true
			}
			continue
		}
		switch {
		case k&preTrigger != 0:
			return true
		case k&preDash != 0:
			if len(s)-i >= 5 && s[i+1:i+5] == "----" {
				return true
			}
			run++
			continue
		case k&preSpace != 0 && run >= 4 && run <= 16:
			if w := s[i-run:]; schemeStart[w[0]] && startsScheme(w) {
				return true
			}
		}
		run = 0
	}
	return false
}

// TestMayHoldSecretAsByteByByte: the first look says what the byte-by-byte
// reference says on texts made of words, scheme words, dashes (a dash ends
// no token, and one that brings a run to 16 before a space decides
// nothing), triggers, spaces and escapes, around the 16-byte token bound.
func TestMayHoldSecretAsByteByByte(t *testing.T) {
	parts := []string{"a", "rate", "limit", "exceeded", "abcdefghijklmno", "abcdefghijklmnop", "Bearer", "basic", "Digest",
		"Negotiate", "-", "--", "-----", " ", "  ", "\t", "\n", "\\", "_", ".", "/", "+", "1", "@", "%", "=", ":", "\"", "'",
		"é", "\xff", "(", ")", ",", "!", "token", "x-", "-x"}
	rng := rand.New(rand.NewPCG(7, 8))
	check := func(s string) {
		t.Helper()
		if got, want := mayHoldSecret(s), mayHoldSecretRef(s); got != want {
			t.Fatalf("mayHoldSecret(%q) = %v, the reference says %v", s, got, want)
		}
	}
	for _, s := range []string{"", "Rate limit exceeded", "aaaaaaaaaaaaaaa- ", "aaaaaaaaaaaaaaa-", "aaaaaaaaaaaaaaa-a",
		"aaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaa", "Bearer abc", "see the ----- line", strings.Repeat("-", 20)} {
		check(s)
	}
	for range 200000 {
		var b strings.Builder
		for n := rng.IntN(12); n >= 0; n-- {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		check(b.String())
	}
}
