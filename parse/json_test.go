package parse

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
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
