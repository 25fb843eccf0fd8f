package testenv

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestUnitFreeAddrNeverRepeats: FreeAddr never gives one address twice in
// a process, even to tests that ask at once, and every address is below
// the kernel's ephemeral range and the shared cluster's ports.
func TestUnitFreeAddrNeverRepeats(t *testing.T) {
	const n = 400
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
	defer func() { // so that a repeated run (-count) finds them free
		var ports []int
		for a := range seen {
			p, _ := strconv.Atoi(strings.TrimPrefix(a, "127.0.0.1:"))
			ports = append(ports, p)
		}
		release(ports)
	}()
	for a := range got {
		if seen[a] {
			t.Fatalf("FreeAddr gave %s twice", a)
		}
		seen[a] = true
		p, err := strconv.Atoi(strings.TrimPrefix(a, "127.0.0.1:"))
		if err != nil || p < portLow || p >= portHigh || p >= ephemeralLow() {
			t.Fatalf("FreeAddr gave %s; want 127.0.0.1 and a port in %d-%d below %d", a, portLow, portHigh-1, ephemeralLow())
		}
	}
	if len(seen) != n {
		t.Fatalf("%d addresses; want %d", len(seen), n)
	}
}

// drawChildEnv makes TestFreeAddrAcrossProcesses, run as a child, draw
// every port it can in the range the variable names and print them.
const drawChildEnv = "ERRTRAIL_TEST_DRAW_PORTS"

// TestFreeAddrAcrossProcesses: another process (this test binary run
// again) that draws from the same range never gets a port this process
// drew and still holds, but gets the others; once such a process has
// exited, its ports are free again (the kernel drops its locks).
func TestFreeAddrAcrossProcesses(t *testing.T) {
	if r := os.Getenv(drawChildEnv); r != "" {
		l, h, _ := strings.Cut(r, "-")
		lo, _ := strconv.Atoi(l)
		hi, _ := strconv.Atoi(h)
		var out []string
		for {
			p, err := drawPortIn(lo, hi)
			if err != nil {
				break
			}
			out = append(out, strconv.Itoa(p))
		}
		os.Stdout.WriteString("drawn: " + strings.Join(out, " ") + "\n")
		return
	}
	// A narrow range of its own, above FreeAddr's and below the cluster's,
	// so the child can draw all of it and no other test draws from it; the
	// same test of another suite waits for this one (an flock on the range).
	const lo, hi = 28040, 28080
	dir := filepath.Join(os.TempDir(), "errtrail-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	holdLock(t, filepath.Join(dir, "range-28040-28080.lock"), syscall.LOCK_EX, "the port test's range lock", "the same test of another suite ran")
	child := func() map[int]bool {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestFreeAddrAcrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), drawChildEnv+"="+strconv.Itoa(lo)+"-"+strconv.Itoa(hi))
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, b)
		}
		line := ""
		for l := range strings.Lines(string(b)) {
			if s, ok := strings.CutPrefix(l, "drawn: "); ok {
				line = strings.TrimSpace(s)
			}
		}
		got := map[int]bool{}
		for _, f := range strings.Fields(line) {
			p, _ := strconv.Atoi(f)
			got[p] = true
		}
		return got
	}

	var mine []int
	defer func() { release(mine) }() // so that a repeated run (-count) finds them free
	for range 10 {
		p, err := drawPortIn(lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, p)
	}

	first := child()
	for _, p := range mine {
		if first[p] {
			t.Errorf("the child drew port %d, which this process holds", p)
		}
	}
	if len(first) == 0 {
		t.Fatalf("the child drew no port of %d-%d beside this process's 10", lo, hi-1)
	}
	// The first child's locks ended with it: a second child gets its ports.
	second := child()
	for p := range first {
		if !second[p] && !portBusy(p) {
			t.Errorf("port %d, drawn by the first child, not drawn by the second after the first exited", p)
		}
	}
}

// portBusy reports whether something listens on the port now (another
// suite's server may have taken a port between the two children).
func portBusy(p int) bool {
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err == nil {
		c.Close()
	}
	return err == nil
}

// release gives back ports this process drew.
func release(ports []int) {
	drawn.Lock()
	defer drawn.Unlock()
	for _, p := range ports {
		if f := drawn.locks[p]; f != nil {
			f.Close()
			delete(drawn.locks, p)
		}
	}
}
