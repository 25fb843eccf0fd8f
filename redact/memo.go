package redact

import "hash/maphash"

// memo remembers the verdicts of recent identifier, path and endpoint
// checks: a direct-mapped table of 512 slots keyed by the value and its
// kind. The slots own copies of short values (up to memoMax bytes) in
// buffers allocated once, so a Redactor in steady state allocates nothing;
// a value that maps to a busy slot replaces the one there.
type memo struct {
	seed  maphash.Seed
	slots []memoSlot
}

type memoSlot struct {
	kind uint8
	keep bool
	in   []byte
	out  []byte
}

const (
	memoSlots = 512
	memoMax   = 96
	memoMin   = 8 // shorter values are checked each time
)

// Kinds of memoised checks.
const (
	kindIdent    uint8 = 1 // + Grammar
	kindPath     uint8 = 8
	kindEndpoint uint8 = 9
)

func (m *memo) init() {
	m.seed = maphash.MakeSeed()
	m.slots = make([]memoSlot, memoSlots)
	buf := make([]byte, memoSlots*2*memoMax)
	for i := range m.slots {
		b := buf[i*2*memoMax : (i+1)*2*memoMax]
		m.slots[i].in = b[:0:memoMax]
		m.slots[i].out = b[memoMax:memoMax]
	}
}

// find returns the slot for s and whether it holds s's verdict. A value
// too long to remember gets a nil slot.
func (m *memo) find(s string, kind uint8) (*memoSlot, bool) {
	if len(s) > memoMax {
		return nil, false
	}
	h := maphash.String(m.seed, s) ^ uint64(kind)*0x9e3779b97f4a7c15
	slot := &m.slots[h&(memoSlots-1)]
	return slot, slot.kind == kind && bstr(slot.in) == s
}

// store records a verdict in slot (from find); out is what replaces s when
// keep is false. Values or outputs too long for the slot are not kept.
func (m *memo) store(slot *memoSlot, s string, kind uint8, keep bool, out []byte) {
	if slot == nil || len(out) > memoMax {
		return
	}
	slot.kind = kind
	slot.keep = keep
	slot.in = append(slot.in[:0], s...)
	slot.out = append(slot.out[:0], out...)
}
