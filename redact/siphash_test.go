package redact

import (
	"encoding/binary"
	"testing"
)

// The test vectors of the SipHash paper's appendix: key 00 01 … 0f, message
// 00 01 … (n-1).
func TestSipHash24Vectors(t *testing.T) {
	var key [16]byte
	for i := range key {
		key[i] = byte(i)
	}
	k0, k1 := binary.LittleEndian.Uint64(key[:8]), binary.LittleEndian.Uint64(key[8:])
	msg := make([]byte, 15)
	for i := range msg {
		msg[i] = byte(i)
	}
	for _, c := range []struct {
		n    int
		want uint64
	}{{0, 0x726fdb47dd0e0e31}, {15, 0xa129ca6149be45e5}} {
		if got := sipHash24(k0, k1, msg[:c.n]); got != c.want {
			t.Errorf("SipHash-2-4 of %d bytes = %#x; want %#x", c.n, got, c.want)
		}
	}
}

func TestHash64IsKeyed(t *testing.T) {
	a, b := New([]byte("key-one-0123456789")), New([]byte("key-two-0123456789"))
	if a.Hash64("lead-7781") == b.Hash64("lead-7781") {
		t.Fatal("two keys give the same hash")
	}
	if a.Hash64("lead-7781") != New([]byte("key-one-0123456789")).Hash64("lead-7781") {
		t.Fatal("one key gives two hashes")
	}
	if a.Hash64("lead-7781") == a.Hash64("lead-7782") || a.Hash64("x") == 0 {
		t.Fatal("two values share a hash, or a hash is 0 (which means none)")
	}
	if n := testing.AllocsPerRun(100, func() { a.Hash64("lead-7781") }); n != 0 {
		t.Fatalf("Hash64 allocates %v times", n)
	}
}
