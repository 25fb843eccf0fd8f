package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of utime and stime in /proc/<pid>/stat;
// 100 on every Linux this runs on (getconf CLK_TCK).
const clockTick = 100

// cpuTicks returns utime+stime of a process (or of one task) from its stat
// file. The command name may hold spaces and parentheses, so the fields are
// counted from the last ')'.
func cpuTicks(statPath string) (name string, ticks int64, err error) {
	b, err := os.ReadFile(statPath)
	if err != nil {
		return "", 0, err
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, fmt.Errorf("%s: unexpected format", statPath)
	}
	name = s[open+1 : end]
	f := strings.Fields(s[end+1:])
	// After the name: state(3) ppid(4) ... utime(14) stime(15); f[0] is field 3.
	if len(f) < 13 {
		return "", 0, fmt.Errorf("%s: short", statPath)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, fmt.Errorf("%s: bad utime/stime", statPath)
	}
	return name, u + st, nil
}

func procCPU(pid int) (time.Duration, error) {
	_, t, err := cpuTicks(fmt.Sprintf("/proc/%d/stat", pid))
	return ticksDur(t), err
}

func ticksDur(t int64) time.Duration { return time.Duration(t) * time.Second / clockTick }

// threadSample is the CPU of each live thread of a process, by thread id,
// with the thread's name (clickhouse-server names its pools: TCPHandler,
// BackgrProcPool for merges, BackgrSchedPool for the Kafka engine's
// streaming, rdk:* for librdkafka).
type threadSample map[string]struct {
	name  string
	ticks int64
}

func threads(pid int) threadSample {
	out := threadSample{}
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, d := range dirs {
		name, t, err := cpuTicks(d + "/stat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		out[filepath.Base(d)] = struct {
			name  string
			ticks int64
		}{name, t}
	}
	return out
}

// threadGroup folds a thread name into a group: pools keep their name,
// librdkafka's threads are one group.
func threadGroup(name string) string {
	switch {
	case strings.HasPrefix(name, "rdk:"):
		return "rdkafka"
	case strings.HasPrefix(name, "TCPHandler"):
		return "tcp"
	case strings.HasPrefix(name, "HTTPHandler"):
		return "http"
	case strings.HasPrefix(name, "BackgrProcPool"):
		return "merges"
	case strings.HasPrefix(name, "BackgrSchedPool"), strings.HasPrefix(name, "BckSchPool"):
		return "sched"
	default:
		return "other"
	}
}

// threadDelta is the CPU spent between a and b by thread group (the
// thread's name at b); a thread
// that appeared meanwhile counts from zero, one that ended is lost (the
// caller reports the whole process's delta minus the sum as "gone").
func threadDelta(a, b threadSample) map[string]time.Duration {
	d := map[string]time.Duration{}
	for tid, tb := range b {
		base := int64(0)
		// ClickHouse renames a pool thread when it takes a query, so a
		// thread is known by its id only.
		if ta, ok := a[tid]; ok {
			base = ta.ticks
		}
		d[threadGroup(tb.name)] += ticksDur(tb.ticks - base)
	}
	return d
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

// serverPid finds clickhouse-server: the stack's pid file if it names a live
// clickhouse process, else the process listening on the native port.
func serverPid(root, chAddr string) (int, error) {
	if b, err := os.ReadFile(filepath.Join(root, ".stack/clickhouse/clickhouse.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			if name, _, err := cpuTicks(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.HasPrefix(name, "clickhouse") {
				return pid, nil
			}
		}
	}
	return pidListening(chAddr)
}

// pidListening maps a listening TCP port to its socket inode
// (/proc/net/tcp{,6}) and the inode to the process holding it.
func pidListening(addr string) (int, error) {
	i := strings.LastIndexByte(addr, ':')
	port, err := strconv.Atoi(addr[i+1:])
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
