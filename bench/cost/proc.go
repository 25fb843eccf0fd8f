package main

import (
	"strings"
	"time"

	"errtrail.bench/procstat"
)

// threadSample is the CPU of each live thread of a process, by thread id,
// with the thread's name (clickhouse-server names its pools: TCPHandler,
// BackgrProcPool for merges, BackgrSchedPool for the Kafka engine's
// streaming, rdk:* for librdkafka).
type threadSample map[string]procstat.Thread

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
		var base time.Duration
		// ClickHouse renames a pool thread when it takes a query, so a
		// thread is known by its id only.
		if ta, ok := a[tid]; ok {
			base = ta.CPU
		}
		d[threadGroup(tb.Name)] += tb.CPU - base
	}
	return d
}
