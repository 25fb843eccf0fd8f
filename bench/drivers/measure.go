package main

import (
	"fmt"
	"runtime"
	"syscall"
	"time"

	"errtrail.bench/procstat"
)

// sample is the process's CPU time, allocations and the wall clock at a point.
type sample struct {
	wall            time.Time
	user, sys       time.Duration
	mallocs, allocB uint64
	gcs             uint32
	load            string
}

func take() sample {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return sample{
		wall: time.Now(),
		user: time.Duration(ru.Utime.Nano()), sys: time.Duration(ru.Stime.Nano()),
		mallocs: ms.Mallocs, allocB: ms.TotalAlloc, gcs: ms.NumGC,
		load: procstat.LoadAvg(),
	}
}

// report prints one result line: per-unit CPU (user+sys of the whole
// process, so GC and the driver's goroutines count), allocations and rate.
func report(what, driver string, units int, unit string, a, b sample, extra string) {
	wall := b.wall.Sub(a.wall)
	user, sys := b.user-a.user, b.sys-a.sys
	cpu := user + sys
	n := float64(units)
	fmt.Printf("RESULT %-6s driver=%-16s %s=%d wall_s=%.3f cpu_s=%.3f user_s=%.3f sys_s=%.3f ns_cpu_per_%s=%.0f %s_per_s=%.0f allocs_per_%s=%.2f bytes_per_%s=%.0f gcs=%d load=%s..%s %s\n",
		what, driver, unit+"s", units, wall.Seconds(), cpu.Seconds(), user.Seconds(), sys.Seconds(),
		unit, float64(cpu.Nanoseconds())/n, unit, n/wall.Seconds(),
		unit, float64(b.mallocs-a.mallocs)/n, unit, float64(b.allocB-a.allocB)/n,
		b.gcs-a.gcs, a.load, b.load, extra)
}
