package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The server's CPU is read from /proc, as bench/cost does: utime+stime of
// the clickhouse-server process (all its threads), and per thread to tell
// the merge pool (BackgrProcPool) from the threads that run queries.

// userHZ is the unit of utime and stime in /proc/<pid>/stat (getconf CLK_TCK).
const userHZ = 100

// statTicks reads the command name and utime+stime from a stat file. The
// name may hold spaces or parentheses, so fields are counted from the last ')'.
func statTicks(path string) (string, int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, fmt.Errorf("%s: unexpected format", path)
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 13 { // f[0] is field 3 (state); utime and stime are fields 14 and 15
		return "", 0, fmt.Errorf("%s: too few fields", path)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, fmt.Errorf("%s: bad utime/stime", path)
	}
	return s[open+1 : end], u + st, nil
}

func ticks(t int64) time.Duration { return time.Duration(t) * time.Second / userHZ }

// sample is the process's CPU and each live thread's, at one moment.
type sample struct {
	at      time.Time
	total   time.Duration
	threads map[string]thread // by thread id
}

type thread struct {
	name string
	cpu  time.Duration
}

func takeSample(pid int) (sample, error) {
	s := sample{at: time.Now(), threads: map[string]thread{}}
	_, t, err := statTicks(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	s.total = ticks(t)
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, d := range dirs {
		name, t, err := statTicks(d + "/stat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		s.threads[filepath.Base(d)] = thread{name, ticks(t)}
	}
	return s, nil
}

// byGroup is the CPU spent between a and b by thread group: "merges" (the
// background pool, BackgrProcPool) and "queries" (every other thread: an
// INSERT … SELECT and the views it pushes to run in threads that 18.16
// does not name TCPHandler). A thread that started meanwhile counts from
// zero; one that ended is lost (rare: these pools are long-lived).
func byGroup(a, b sample) map[string]time.Duration {
	out := map[string]time.Duration{}
	for tid, tb := range b.threads {
		g := "queries"
		if strings.HasPrefix(tb.name, "BackgrProcPool") {
			g = "merges"
		}
		out[g] += tb.cpu - a.threads[tid].cpu
	}
	return out
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return f[0] + "/" + f[1] + "/" + f[2]
}

// serverPid finds the clickhouse-server that serves addr. This machine runs
// several, so in order: the local stack's pid file, the process listening
// on addr's port, and pgrep only if it finds exactly one.
func serverPid(root, addr string) (int, error) {
	if b, err := os.ReadFile(filepath.Join(root, ".stack/clickhouse/clickhouse.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			if name, _, err := statTicks(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.HasPrefix(name, "clickhouse") {
				if p, err := pidListening(addr); err != nil || p == pid {
					return pid, nil
				}
			}
		}
	}
	if pid, err := pidListening(addr); err == nil {
		return pid, nil
	}
	out, err := exec.Command("pgrep", "-f", "clickhouse-server").Output()
	if err != nil {
		return 0, fmt.Errorf("pgrep: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 1 {
		return 0, fmt.Errorf("pgrep finds %d clickhouse-server processes and none is known to serve %s", len(f), addr)
	}
	return strconv.Atoi(f[0])
}

// pidListening maps addr's port to its listening socket's inode
// (/proc/net/tcp, tcp6) and the inode to the process that holds it.
func pidListening(addr string) (int, error) {
	port, err := strconv.Atoi(addr[strings.LastIndexByte(addr, ':')+1:])
	if err != nil {
		return 0, err
	}
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			x := strings.Fields(line)
			if len(x) < 10 || x[3] != "0A" { // 0A: LISTEN
				continue
			}
			p := x[1][strings.LastIndexByte(x[1], ':')+1:]
			if v, err := strconv.ParseInt(p, 16, 32); err == nil && int(v) == port {
				inodes[x[9]] = true
			}
		}
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		l, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(l, "socket:[") {
			continue
		}
		if inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] {
			return strconv.Atoi(strings.Split(fd, "/")[2])
		}
	}
	return 0, fmt.Errorf("no process listens on port %d", port)
}
