package main

import (
	"strings"
	"time"

	"errtrail.bench/procstat"
)

// The server's CPU is read from /proc (errtrail.bench/procstat, shared with
// bench/cost): utime+stime of the clickhouse-server process (all its
// threads), and per thread to tell the merge pool (BackgrProcPool) from the
// threads that run queries.

// sample is the process's CPU and each live thread's, at one moment.
type sample struct {
	at      time.Time
	total   time.Duration
	threads map[string]procstat.Thread // by thread id
}

func takeSample(pid int) (sample, error) {
	s := sample{at: time.Now()}
	total, err := procstat.CPU(pid)
	if err != nil {
		return s, err
	}
	s.total, s.threads = total, procstat.Threads(pid)
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
		if strings.HasPrefix(tb.Name, "BackgrProcPool") {
			g = "merges"
		}
		out[g] += tb.CPU - a.threads[tid].CPU
	}
	return out
}
