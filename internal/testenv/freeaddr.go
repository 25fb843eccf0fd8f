package testenv

import (
	"net"
	"sync"
	"testing"
)

// handedOut are the addresses FreeAddr gave in this process. The kernel
// can give a port it just gave, and that was closed again, to the next
// bind of port 0 (242 repeats in 2,000 binds on the CI machine), so two
// tests running at once were handed one port for two servers before
// either had bound it.
var handedOut struct {
	sync.Mutex
	addrs map[string]bool
}

// FreeAddr returns a loopback address nothing listened on a moment ago and
// that no other test of this process was given: the address for a server a
// test starts (the server binds it itself).
func FreeAddr(t testing.TB) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.addrs == nil {
		handedOut.addrs = map[string]bool{}
	}
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr
		}
	}
}
