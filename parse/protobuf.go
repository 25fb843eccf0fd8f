package parse

import "math"

// This file is the protobuf wire-format reader behind grpc-status-details-bin.
// It knows the wire format and the well-known types that carry details
// (map entries, google.protobuf.Value and Struct), nothing of google.rpc:
// details.go gives the fields their meaning. Its contract:
//
//   - pbuf is a cursor over one message with a sticky error. Callers read
//     fields in a `for c.more()` loop without checking each step, and look at
//     c.bad once at the end.
//   - Malformed input sets bad and stops the loop; it never panics and never
//     reads past the slice: a length larger than the bytes left, a varint
//     longer than ten bytes, a field number of 0 or above 2^29, a truncated
//     fixed64 or fixed32, or a group (wire types 3 and 4, unused by these
//     messages).
//   - Unknown fields of the known wire types (0, 1, 2, 5) are skipped.
//   - Nothing allocates: bytes returns a sub-slice of the input, and strings
//     built from it are views (bytesToString). They live as long as the
//     input, which for gRPC details is the Decoder's scratch: until the next
//     call on the same Decoder.

// pbuf is a protobuf wire-format cursor with a sticky error: read fields
// unconditionally, check bad once. Lengths larger than the bytes left are
// refused, so hostile input cannot make it allocate or over-read.
type pbuf struct {
	b   []byte
	p   int
	bad bool
}

func (c *pbuf) more() bool { return !c.bad && c.p < len(c.b) }

func (c *pbuf) varint() uint64 {
	var x uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if c.p >= len(c.b) {
			c.bad = true
			return 0
		}
		by := c.b[c.p]
		c.p++
		x |= uint64(by&0x7f) << shift
		if by < 0x80 {
			return x
		}
	}
	c.bad = true
	return 0
}

func (c *pbuf) tag() (field int, wt int) {
	t := c.varint()
	if t>>3 == 0 || t>>3 > 1<<29 {
		c.bad = true
	}
	return int(t >> 3), int(t & 7)
}

func (c *pbuf) bytes() []byte {
	n := c.varint()
	if c.bad || n > uint64(len(c.b)-c.p) {
		c.bad = true
		return nil
	}
	s := c.b[c.p : c.p+int(n)]
	c.p += int(n)
	return s
}

func (c *pbuf) double() float64 {
	if len(c.b)-c.p < 8 {
		c.bad = true
		return 0
	}
	var u uint64
	for i := 7; i >= 0; i-- {
		u = u<<8 | uint64(c.b[c.p+i])
	}
	c.p += 8
	return math.Float64frombits(u)
}

func (c *pbuf) skip(wt int) {
	switch wt {
	case 0:
		c.varint()
	case 1:
		if len(c.b)-c.p < 8 {
			c.bad = true
			return
		}
		c.p += 8
	case 2:
		c.bytes()
	case 5:
		if len(c.b)-c.p < 4 {
			c.bad = true
			return
		}
		c.p += 4
	default:
		c.bad = true // groups (3, 4) are not used by these messages
	}
}

// pbValue decodes a google.protobuf.Value: string, bool, number, or a nested
// struct's bytes. kind is the Value field number that was set.
func pbValue(b []byte) (s string, bv bool, num float64, kind int, sub []byte) {
	c := pbuf{b: b}
	for c.more() {
		field, wt := c.tag()
		switch {
		case field == 2 && wt == 1:
			num = c.double()
			kind = 2
		case field == 3 && wt == 2:
			s, kind = bytesToString(c.bytes()), 3
		case field == 4 && wt == 0:
			bv, kind = c.varint() != 0, 4
		case field == 5 && wt == 2:
			sub, kind = c.bytes(), 5
		default:
			c.skip(wt)
		}
	}
	return
}

// pbStructNumber returns the first of two Struct fields as milliseconds
// (the second is in seconds), or -1.
func pbStructNumber(b []byte, msKey, secKey string) int64 {
	c := pbuf{b: b}
	for c.more() {
		field, wt := c.tag()
		if field != 1 || wt != 2 {
			c.skip(wt)
			continue
		}
		k, v := pbMapEntryRaw(c.bytes())
		if k != msKey && k != secKey {
			continue
		}
		_, _, num, kind, _ := pbValue(v)
		if kind != 2 {
			continue
		}
		if k == secKey {
			num *= 1000
		}
		return int64(num)
	}
	return -1
}

// pbMapEntry decodes a map<string, string> entry (ErrorInfo.metadata).
func pbMapEntry(b []byte) (k, v string) {
	kk, vv := pbMapEntryRaw(b)
	return kk, bytesToString(vv)
}

// pbPair reads the length-delimited fields 1 and 2 of a message, skipping
// any other: a map entry's key and value, an Any's type URL and value. The
// last occurrence of each wins, as protobuf says; bad reports a message
// that ended inside a field.
func pbPair(b []byte) (one, two []byte, bad bool) {
	c := pbuf{b: b}
	for c.more() {
		field, wt := c.tag()
		switch {
		case field == 1 && wt == 2:
			one = c.bytes()
		case field == 2 && wt == 2:
			two = c.bytes()
		default:
			c.skip(wt)
		}
	}
	return one, two, c.bad
}

// pbMapEntryRaw decodes a map entry with a string key (field 1) and returns
// its value (field 2) undecoded: the one reader of map entries, whichever
// the value type (a string, or a google.protobuf.Value in Struct.fields).
func pbMapEntryRaw(b []byte) (k string, v []byte) {
	kb, v, _ := pbPair(b)
	return bytesToString(kb), v
}
