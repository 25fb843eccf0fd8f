package ingest

import "testing"

func TestWindow(t *testing.T) {
	w := newWindow(3)
	for _, h := range []uint64{1, 2, 3} {
		if w.seen(h) {
			t.Fatalf("%d seen on first sight", h)
		}
	}
	if !w.seen(2) {
		t.Fatal("2 not seen again")
	}
	if w.seen(0) || w.seen(0) {
		t.Fatal("hash 0 (no event id) must never count as seen")
	}
	// 4, 5, 6 fill a new generation; 1..3 move to the old one and are still
	// remembered; 7 drops the old generation.
	for _, h := range []uint64{4, 5, 6} {
		w.seen(h)
	}
	if !w.seen(1) {
		t.Fatal("1 forgotten while within the window")
	}
	w.seen(7)
	w.seen(8)
	if w.len() > 6 {
		t.Fatalf("window holds %d ids; want at most 2·size", w.len())
	}
	if off := newWindow(-1); off.seen(5) || off.seen(5) {
		t.Fatal("a disabled window saw an id")
	}
}
