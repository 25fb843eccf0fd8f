package ingest

// window remembers the most recent producer event ids (as 64-bit hashes) to
// drop a producer's re-send of an event it already published. It holds
// between size and 2·size ids in two generations: when the current one fills,
// the older is dropped. Memory is about 2·size·40 bytes (40 MB for the
// default 2^18... see docs/ingest.md). A re-send arriving after the window
// is stored again and collapsed by the errors table's ReplacingMergeTree.
//
// 64-bit hashes can collide: with 500k ids in the window the chance that a
// new id is wrongly taken as seen is about 3·10⁻¹⁴.
type window struct {
	size     int
	cur, old map[uint64]struct{}
}

func newWindow(size int) *window {
	if size <= 0 {
		return &window{}
	}
	return &window{size: size, cur: make(map[uint64]struct{}, size), old: map[uint64]struct{}{}}
}

// reset forgets every id. A rebalance calls it: the ids of a batch that
// was dropped uncommitted (group.go) must not make its messages, delivered
// again, look like re-sends.
func (w *window) reset() {
	clear(w.cur)
	clear(w.old)
}

// seen reports whether h was added before, and adds it. h == 0 (no id) is
// never seen. A zero-size window sees nothing.
func (w *window) seen(h uint64) bool {
	if h == 0 || w.size == 0 {
		return false
	}
	if _, ok := w.cur[h]; ok {
		return true
	}
	if _, ok := w.old[h]; ok {
		w.cur[h] = struct{}{}
		return true
	}
	if len(w.cur) >= w.size {
		clear(w.old)
		w.old, w.cur = w.cur, w.old
	}
	w.cur[h] = struct{}{}
	return false
}

func (w *window) len() int { return len(w.cur) + len(w.old) }
