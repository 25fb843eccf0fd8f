package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/testenv"
)

// TestMeasureTapOverhead is a measurement, not a test: it runs only with
// ERRTRAIL_MEASURE=1 and reports figures (docs/performance.md, "The tap").
//
//	ERRTRAIL_MEASURE=1 go test ./cmd/tap -run TestMeasureTapOverhead -v -timeout 20m
//
// Latency: an open-loop load of ERRTRAIL_MEASURE_RATE (2000) requests/s on
// loopback, to an upstream answering JSON-RPC replies (one in twenty an
// error, so the tap publishes), straight and through the tap in
// alternating rounds of ERRTRAIL_MEASURE_SECONDS (5) s, ERRTRAIL_MEASURE_ROUNDS
// (6) of each. Each latency counts from the moment the request was due, so
// a stalled sender cannot hide a stall. Throughput: one SSE reply of 256 MiB
// read straight and through the tap, alternated, five of each. Events go to
// the stack's Kafka when ERRTRAIL_KAFKA_BROKERS is set, else to a closed
// port (dropped and counted: the publishing cost without a broker).
func TestMeasureTapOverhead(t *testing.T) {
	if os.Getenv("ERRTRAIL_MEASURE") != "1" {
		t.Skip("measurement: set ERRTRAIL_MEASURE=1 to run it")
	}
	rate := envInt("ERRTRAIL_MEASURE_RATE", 2000)
	seconds := envInt("ERRTRAIL_MEASURE_SECONDS", 5)
	rounds := envInt("ERRTRAIL_MEASURE_ROUNDS", 6)

	upstream := measureUpstream(t)
	brokers := []string{closedPort(t)}
	if b := os.Getenv("ERRTRAIL_KAFKA_BROKERS"); b != "" {
		brokers = strings.Split(b, ",")
	}
	proxy, admin, cpu := startTapProcess(t, upstream, brokers, "errtrail.tap-measure")

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 0,
		DialContext: (&net.Dialer{}).DialContext}, Timeout: 10 * time.Second}
	targets := []struct{ name, base string }{{"straight", upstream}, {"tap", "http://" + proxy}}
	lat := map[string][]time.Duration{}
	var roundP99 = map[string][]time.Duration{}
	for _, tg := range targets { // warm the connections
		openLoop(t, client, tg.base, rate, 1)
	}
	var tapCPU time.Duration
	for r := 0; r < rounds; r++ {
		for i := range targets {
			tg := targets[(i+r)%2] // alternate which goes first
			c0 := cpu()
			d := openLoop(t, client, tg.base, rate, seconds)
			if tg.name == "tap" {
				tapCPU += cpu() - c0
			}
			lat[tg.name] = append(lat[tg.name], d...)
			roundP99[tg.name] = append(roundP99[tg.name], quantile(d, 0.99))
		}
	}
	t.Logf("tap process CPU: %v per request (%.0f %% of one core at %d requests/s)",
		tapCPU/time.Duration(len(lat["tap"])), 100*tapCPU.Seconds()/float64(rounds*seconds), rate)
	for _, tg := range targets {
		d := lat[tg.name]
		t.Logf("latency %-8s n=%d p50=%v p90=%v p99=%v p99.9=%v; p99 per round %v", tg.name, len(d),
			quantile(d, .5), quantile(d, .9), quantile(d, .99), quantile(d, .999), roundP99[tg.name])
	}
	t.Logf("added by the tap: p50 %v, p99 %v (goal: p99 ≤ 1 ms)",
		quantile(lat["tap"], .5)-quantile(lat["straight"], .5), quantile(lat["tap"], .99)-quantile(lat["straight"], .99))
	t.Logf("tap metrics: %v", metricSums(t, admin, "errtrail_tap_requests_total", "errtrail_tap_error_replies_total",
		"errtrail_emit_events_sent_total", "errtrail_emit_events_dropped_total"))

	// Throughput: as fast as loopback goes (the hop's own cost), and paced
	// like an agent that produces ERRTRAIL_MEASURE_STREAM_MBPS (50) MB/s.
	for _, pace := range []int{0, envInt("ERRTRAIL_MEASURE_STREAM_MBPS", 50)} {
		tput := map[string][]float64{}
		var streamCPU time.Duration
		for r := 0; r < 5; r++ {
			for i := range targets {
				tg := targets[(i+r)%2]
				c0 := cpu()
				tput[tg.name] = append(tput[tg.name], streamMBps(t, client, tg.base, pace))
				if tg.name == "tap" {
					streamCPU += cpu() - c0
				}
			}
		}
		slices.Sort(tput["straight"])
		slices.Sort(tput["tap"])
		what := "unpaced"
		if pace > 0 {
			what = fmt.Sprintf("paced at %d MB/s", pace)
		}
		t.Logf("SSE throughput %s, MB/s: straight %v, tap %v; median ratio tap/straight %.3f (goal: within 5 %%); tap CPU %.2f ms per MB",
			what, fmtF(tput["straight"]), fmtF(tput["tap"]), tput["tap"][2]/tput["straight"][2],
			float64(streamCPU.Microseconds())/1000/(5*float64(streamBytes)/1e6))
	}
}

// startTapProcess builds cmd/tap and runs it as its own process, as it is
// deployed (so the load generator's garbage collection does not pause
// it); cpu reads the process's CPU time so far.
func startTapProcess(t *testing.T, upstream string, brokers []string, topic string) (proxy, admin string, cpu func() time.Duration) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tap")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	proxy, admin = testenv.FreeAddr(t), testenv.FreeAddr(t)
	cmd := exec.Command(bin, "--upstream", upstream, "--http.listen-address", proxy, "--metrics.listen-address", admin,
		"--kafka.brokers", strings.Join(brokers, ","), "--kafka.topic", topic, "--agent", "measure-agent", "--log.level", "error")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; {
		if resp, err := http.Get("http://" + admin + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the tap did not become ready")
		}
		time.Sleep(50 * time.Millisecond)
	}
	stat := fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)
	return proxy, admin, func() time.Duration {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		ut, _ := strconv.ParseInt(f[11], 10, 64) // utime, stime: fields 14 and 15, in clock ticks
		st, _ := strconv.ParseInt(f[12], 10, 64)
		return time.Duration(ut+st) * time.Second / 100
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func fmtF(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strings.Join(s, " ")
}

// measureUpstream answers POST /rpc with a JSON-RPC task (or, for every
// twentieth id, a JSON-RPC error), and GET /stream with 256 MiB of SSE in
// 16 KiB events, each flushed (paced when ?mbps= says so).
func measureUpstream(t testing.TB) string {
	ok := []byte(`{"jsonrpc":"2.0","id":"ID","result":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-12-01T00:00:00Z"},"artifacts":[{"artifactId":"a-1","parts":[{"text":"` + strings.Repeat("lorem ipsum ", 30) + `"}]}]}}`)
	bad := []byte(`{"jsonrpc":"2.0","id":"ID","error":{"code":-32001,"message":"Task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`)
	event := append([]byte("event: message\ndata: "), bytes.Repeat([]byte("x"), 16<<10-32)...)
	event = append(event, "\n\n"...)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /rpc", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "application/json")
		if n%20 == 0 {
			w.Write(bad)
			return
		}
		w.Write(ok)
	})
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		pace, _ := strconv.Atoi(r.URL.Query().Get("mbps"))
		begin := time.Now()
		for sent := 0; sent < streamBytes; sent += len(event) {
			if pace > 0 { // an agent producing pace MB/s: wait until this event is due
				if d := time.Duration(float64(sent) / (float64(pace) * 1e6) * float64(time.Second)); time.Since(begin) < d {
					time.Sleep(d - time.Since(begin))
				}
			}
			if _, err := w.Write(event); err != nil {
				return
			}
			f.Flush()
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// openLoop sends rate requests per second for seconds, each when it is
// due whatever the earlier ones do, and returns each one's latency from
// its due time.
func openLoop(t *testing.T, c *http.Client, base string, rate, seconds int) []time.Duration {
	n := rate * seconds
	out := make([]time.Duration, n)
	body := `{"jsonrpc":"2.0","id":"r1","method":"GetTask","params":{"id":"t-1"}}`
	var wg sync.WaitGroup
	var failed sync.Once
	start := time.Now().Add(10 * time.Millisecond)
	interval := time.Second / time.Duration(rate)
	for i := 0; i < n; i++ {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(context.Background(), "POST", base+"/rpc?n="+strconv.Itoa(i), strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			out[i] = time.Since(due)
			if err != nil {
				failed.Do(func() { t.Errorf("request %d to %s: %v", i, base, err) })
			}
		}(i)
	}
	wg.Wait()
	return out
}

func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// streamBytes is the size of the measured SSE reply.
const streamBytes = 256 << 20

// streamMBps reads the stream once (paced at mbps by the upstream, 0 for
// as fast as it goes) and returns MB/s.
func streamMBps(t *testing.T, c *http.Client, base string, mbps int) float64 {
	begin := time.Now()
	resp, err := c.Get(base + "/stream?mbps=" + strconv.Itoa(mbps))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n < streamBytes {
		t.Fatalf("stream from %s: %d bytes, %v", base, n, err)
	}
	return float64(n) / 1e6 / time.Since(begin).Seconds()
}
