package testenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Ports for servers a test starts are drawn, not asked of the kernel, and
// reserved across processes until the drawing process exits:
//
//   - below the kernel's ephemeral range, where the kernel takes the source
//     ports of outgoing connections and the ports of listeners on port 0.
//     A port found free by binding port 0 and closing it was in that range,
//     and with two suites at once one was taken by another process's
//     connection in the seconds before the server bound it (e2e's alerter
//     exited on "bind: address already in use");
//   - below the shared cluster's default ports (28100 and up), so a test
//     that stops a cluster node and starts it again finds its port free;
//   - with an flock on a file named after the port, held open by the
//     process that drew it (closed, and so released, when it exits), so
//     test binaries running at once, of one suite or of two, never draw the
//     same port; within a process, a port is drawn once.
const (
	portLow  = 20000
	portHigh = 28000 // exclusive
)

// drawn holds the lock files of the ports this process drew.
var drawn struct {
	sync.Mutex
	locks map[int]*os.File
}

// FreeAddr returns a loopback address for a server a test starts (the
// server binds it itself): nothing listened on it a moment ago, and no
// other test of any process that draws ports here was or will be given it
// while this process runs.
func FreeAddr(t testing.TB) string {
	t.Helper()
	p, err := drawPort()
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(p)
}

// drawPort draws a port as the comment at the top of this file describes.
func drawPort() (int, error) {
	lo, hi := portLow, min(portHigh, ephemeralLow())
	if hi-lo < 1000 {
		lo, hi = portLow, portHigh
	}
	return drawPortIn(lo, hi)
}

// drawPortIn draws a port of lo up to hi (exclusive).
func drawPortIn(lo, hi int) (int, error) {
	drawn.Lock()
	defer drawn.Unlock()
	if drawn.locks == nil {
		drawn.locks = map[int]*os.File{}
	}
	dir := filepath.Join(os.TempDir(), "errtrail-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return 0, fmt.Errorf("port locks: %w", err)
	}
	// Every port of the range once, from a random one on: a draw fails only
	// when none is free.
	n := hi - lo
	start := rand.IntN(n)
	for i := range n {
		p := lo + (start+i)%n
		if drawn.locks[p] != nil {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			return 0, fmt.Errorf("port lock: %w", err)
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close() // another process holds it
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			f.Close() // something that draws no ports here listens on it
			continue
		}
		ln.Close()
		drawn.locks[p] = f
		return p, nil
	}
	return 0, fmt.Errorf("no free port in %d-%d", lo, hi-1)
}

// ephemeralLow is the first port of the kernel's ephemeral range.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				return n
			}
		}
	}
	return 32768
}
