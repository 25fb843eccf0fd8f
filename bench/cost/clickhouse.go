// The harness's own few ClickHouse queries (over HTTP) and the servers' CPU readings.

package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"errtrail.bench/procstat"
)

// --- ClickHouse over HTTP (the harness's own few queries) -------------------

func (h *harness) query(q string) (string, error) {
	resp, err := http.Post("http://"+h.http+"/?"+url.Values{"database": {"default"}}.Encode(), "text/plain", strings.NewReader(q))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("%s: %s", firstLine(q), strings.TrimSpace(string(b)))
	}
	return string(b), nil
}

func (h *harness) exec(q string) error { _, err := h.query(q); return err }

// onCluster is " ON CLUSTER <name>" in cluster mode, else empty.
func (h *harness) onCluster() string {
	if h.cluster == "" {
		return ""
	}
	return " ON CLUSTER " + h.cluster
}

// serverCPU is the CPU of every server counted (user+sys).
func (h *harness) serverCPU() (time.Duration, error) {
	var sum time.Duration
	for _, pid := range h.srvPids {
		d, err := procstat.CPU(pid)
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

// serverThreads samples the threads of every server (thread ids are
// unique on the machine, so the samples merge).
func (h *harness) serverThreads() threadSample {
	out := threadSample{}
	for _, pid := range h.srvPids {
		for k, v := range procstat.Threads(pid) {
			out[k] = v
		}
	}
	return out
}
