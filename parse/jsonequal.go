package parse

import (
	"bytes"
	"strconv"
)

// jsonEqual reports whether two validated JSON values are the same value:
// objects member by member whatever their order, arrays element by element,
// strings by their unescaped contents, numbers by value (30000 = 3e4).
// Seed 000's MCP binding sends a tool error twice, as structuredContent
// and as "matching serialized JSON text in content"; serializers differ in
// member order, spacing and escapes, never in values.
//
// budget bounds the work (one unit per value, one per member passed over
// when looking up a member out of order) so that a hostile pair of large
// reordered objects stays linear: a comparison that runs out of budget
// reports the values equal (no finding on doubt).
func (d *Decoder) jsonEqual(a, b jval, budget int) bool {
	eq, _ := d.jsonEq(a, b, budget)
	return eq
}

func (d *Decoder) jsonEq(a, b jval, budget int) (bool, int) {
	if budget--; budget < 0 {
		return true, budget
	}
	if a.kind != b.kind {
		return false, budget
	}
	switch a.kind {
	case jObject:
		if members(a) != members(b) {
			return false, budget
		}
		ia, ib := a.object(), b.object()
		for {
			ka, va, ok := ia.next()
			if !ok {
				return true, budget
			}
			kb, vb, _ := ib.next()
			if !bytes.Equal(ka, kb) { // out of order: look it up
				vb = b.get(bytesToString(ka))
				budget -= members(b)
				if !vb.ok() {
					return false, budget
				}
			}
			var eq bool
			if eq, budget = d.jsonEq(va, vb, budget); !eq || budget < 0 {
				return eq, budget
			}
		}
	case jArray:
		ia, ib := a.array(), b.array()
		for {
			va, okA := ia.next()
			vb, okB := ib.next()
			if !okA || !okB {
				return okA == okB, budget
			}
			var eq bool
			if eq, budget = d.jsonEq(va, vb, budget); !eq || budget < 0 {
				return eq, budget
			}
		}
	case jString:
		if bytes.Equal(a.inner(), b.inner()) {
			return true, budget
		}
		return d.sc.ar.str(a) == d.sc.ar.str(b), budget
	case jNumber:
		if bytes.Equal(a.bytes(), b.bytes()) {
			return true, budget
		}
		x, errA := strconv.ParseFloat(bytesToString(a.bytes()), 64)
		y, errB := strconv.ParseFloat(bytesToString(b.bytes()), 64)
		return errA == nil && errB == nil && x == y, budget
	}
	return true, budget // true, false, null: the kind is the value
}

// members counts an object's members.
func members(v jval) int {
	n := 0
	it := v.object()
	for {
		if _, _, ok := it.next(); !ok {
			return n
		}
		n++
	}
}
