// Package procstat reads the CPU of processes and threads from /proc, for
// the measurement harnesses under bench/ (cost, views), each a module of
// its own: utime+stime of a process or of each of its threads, the load
// average, and the process that listens on a TCP port.
package procstat

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ClockTick is USER_HZ, the unit of utime and stime in /proc/<pid>/stat;
// 100 on every Linux this runs on (getconf CLK_TCK).
const ClockTick = 100

// Ticks returns the command name and utime+stime of a process (or one of
// its tasks) from its stat file. The name may hold spaces and parentheses,
// so the fields are counted from the last ')'.
func Ticks(statPath string) (name string, ticks int64, err error) {
	b, err := os.ReadFile(statPath)
	if err != nil {
		return "", 0, err
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, fmt.Errorf("%s: unexpected format", statPath)
	}
	f := strings.Fields(s[end+1:])
	// After the name: state(3) ppid(4) ... utime(14) stime(15); f[0] is field 3.
	if len(f) < 13 {
		return "", 0, fmt.Errorf("%s: too few fields", statPath)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, fmt.Errorf("%s: bad utime/stime", statPath)
	}
	return s[open+1 : end], u + st, nil
}

// Duration converts clock ticks to a duration.
func Duration(ticks int64) time.Duration { return time.Duration(ticks) * time.Second / ClockTick }

// CPU returns the user+sys CPU a process used so far.
func CPU(pid int) (time.Duration, error) {
	_, t, err := Ticks(fmt.Sprintf("/proc/%d/stat", pid))
	return Duration(t), err
}

// Thread is one live thread's name and CPU so far.
type Thread struct {
	Name string
	CPU  time.Duration
}

// Threads returns the live threads of a process by thread id. A thread
// that ends while they are read is left out.
func Threads(pid int) map[string]Thread {
	out := map[string]Thread{}
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, d := range dirs {
		name, t, err := Ticks(d + "/stat")
		if err != nil {
			continue
		}
		out[filepath.Base(d)] = Thread{name, Duration(t)}
	}
	return out
}

// LoadAvg is the 1, 5 and 15 minute load average, "a/b/c", or "?".
func LoadAvg() string {
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

// StackServer returns the local stack's clickhouse-server (root's
// .stack/clickhouse/clickhouse.pid) if that file names a live clickhouse
// process that also listens on addr's port (or nothing does), else the
// process listening on addr's port. The machine may run several servers.
func StackServer(root, addr string) (int, error) {
	if b, err := os.ReadFile(filepath.Join(root, ".stack/clickhouse/clickhouse.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			if name, _, err := Ticks(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.HasPrefix(name, "clickhouse") {
				if p, err := Listening(addr); err != nil || p == pid {
					return pid, nil
				}
			}
		}
	}
	return Listening(addr)
}

// Listening returns the process that listens on addr's TCP port: the port's
// listening socket inode from /proc/net/tcp{,6}, then the process holding
// that inode.
func Listening(addr string) (int, error) {
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
