package parse

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

// firstSpecial is the byte-by-byte reference for specialWord: the index of
// the first byte of w that ends the string fast path, or 8.
func firstSpecial(w [8]byte) int {
	for i, c := range w {
		if strSpecial[c] {
			return i
		}
	}
	return 8
}

func lowestMark(m uint64) int {
	if m == 0 {
		return 8
	}
	return bits.TrailingZeros64(m) >> 3
}

// TestSpecialWordMarksFirstSpecialByte holds the word-at-a-time test to the
// byte table: the lowest mark is exactly the first '"', '\\', control or
// non-ASCII byte, and a word without one has no mark at all. Every byte
// value is tried at every position, after plain bytes and before random
// ones (whose borrows may only add marks above it), then random words
// dense with special bytes.
func TestSpecialWordMarksFirstSpecialByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(w [8]byte) {
		t.Helper()
		m := specialWord(binary.LittleEndian.Uint64(w[:]))
		if got, want := lowestMark(m), firstSpecial(w); got != want {
			t.Fatalf("specialWord(%q) marks byte %d first, want %d (mask %#x)", w[:], got, want, m)
		}
		if m&^msb != 0 {
			t.Fatalf("specialWord(%q) = %#x sets bits other than the bytes' high bits", w[:], m)
		}
	}
	for k := 0; k < 8; k++ {
		for b := 0; b < 256; b++ {
			for range 16 {
				var w [8]byte
				for i := range w {
					switch {
					case i < k:
						w[i] = byte(' ' + rng.IntN(0x7f-' ')) // printable ASCII
						if w[i] == '"' || w[i] == '\\' {
							w[i] = 'a'
						}
					case i == k:
						w[i] = byte(b)
					default:
						w[i] = byte(rng.IntN(256))
					}
				}
				check(w)
			}
		}
	}
	pick := []byte{0, 1, 0x1f, ' ', '!', '"', '#', '[', '\\', ']', 'a', 0x7f, 0x80, 0x81, 0xa2, 0xdc, 0xff}
	for range 200000 {
		var w [8]byte
		for i := range w {
			w[i] = pick[rng.IntN(len(pick))]
		}
		check(w)
	}
}

// parseIntRef is parseIntPrefix as it was before its loop lost the bound
// check per digit for texts of 18 bytes or fewer: the reference.
func parseIntRef(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || b[0] < '0' || b[0] > '9' {
		return 0, false
	}
	var n int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if n > (1<<62)/10 {
			return 0, false
		}
		n = n*10 + int64(b[i]-'0')
	}
	if i < len(b) {
		if b[i] != '.' {
			return 0, false
		}
		for i++; i < len(b); i++ {
			if b[i] < '0' || b[i] > '9' {
				return 0, false
			}
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// TestParseIntPrefixAtTheDigitBound: integers of every length up to 21
// digits, around the 18-digit fast path and the overflow bound, signed,
// with a fraction or a stray byte, read as the per-digit checked loop
// reads them.
func TestParseIntPrefixAtTheDigitBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var cases []string
	for n := 1; n <= 21; n++ {
		for range 40 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte('0' + rng.IntN(10))
			}
			s := string(b)
			cases = append(cases, s, "-"+s, s+".5", s+"x", s[:n/2]+"/"+s[n/2:], "9"+s)
		}
		cases = append(cases, strings.Repeat("9", n), strings.Repeat("4", n), "-"+strings.Repeat("9", n))
	}
	cases = append(cases, "", "-", ".", "-.5", "0", "-0", "12.", "1e5", "461168601842738790", "4611686018427387904", "46116860184273879")
	for _, c := range cases {
		gn, gok := parseIntPrefix([]byte(c))
		wn, wok := parseIntRef([]byte(c))
		if gn != wn || gok != wok {
			t.Errorf("parseIntPrefix(%q) = %d, %v; want %d, %v", c, gn, gok, wn, wok)
		}
	}
}
