package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/testenv"
)

// roleEnv makes the test binary, started again by TestMeasureTapRatio, run
// as the tap ("tap") or as a bare reverse proxy ("bare") with the flags
// given, instead of running tests: both proxies are then the same build.
const roleEnv = "ERRTRAIL_TAP_MEASURE_ROLE"

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(runRole(role))
	}
	os.Exit(m.Run())
}

// runRole runs the tap or the bare proxy until SIGINT and returns the exit
// status. ERRTRAIL_MEASURE_CPUPROFILE=DIR writes the process's CPU profile
// to DIR/ROLE.pprof, to see where a proxy's time goes.
func runRole(role string) int {
	if dir := os.Getenv("ERRTRAIL_MEASURE_CPUPROFILE"); dir != "" {
		f, err := os.Create(filepath.Join(dir, role+".pprof"))
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	if role == "bare" {
		return runBare(os.Args[1:])
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], os.Stderr)
}

// runBare serves a bare httputil.ReverseProxy to the tap's upstream, with
// the tap's transport (upstreamTransport), rewrite and copy buffers (a
// ReverseProxy without a BufferPool allocates 32 KiB per request, which
// would flatter the tap), on its listen address, with the tap server's
// protocols and timeouts: what the tap costs is what it adds to this.
func runBare(args []string) int {
	o, err := parseFlags(args, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare proxy:", err)
		return 2
	}
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare proxy:", err)
		return 1
	}
	protos := new(http.Protocols)
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: &httputil.ReverseProxy{Rewrite: rewriteTo(o), Transport: upstreamTransport(o), BufferPool: copyBuffers{}},
		Protocols: protos, ReadHeaderTimeout: o.headerTimeout, IdleTimeout: o.idleTimeout}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); srv.Close() }()
	_ = srv.Serve(l)
	return 0
}

// TestMeasureTapRatio is a measurement, not a test: it runs only with
// ERRTRAIL_MEASURE=1 and reports the tap's CPU per proxied request against
// a bare httputil.ReverseProxy with the same transport (goal ≤ 1.2×), and
// both p99s (docs/performance.md, "Emitters and the tap").
//
//	ERRTRAIL_MEASURE=1 go test ./cmd/tap -run TestMeasureTapRatio -v -timeout 20m
//
// Both proxies are this test binary started again (roleEnv), each its own
// process in front of the same upstream (measureUpstream: one reply in
// twenty a JSON-RPC error, which the tap publishes to a closed port, or
// to the stack's Kafka when ERRTRAIL_KAFKA_BROKERS is set). The load goes
// to one, then the other, the order alternating, in ERRTRAIL_MEASURE_ROUNDS
// (6) rounds of ERRTRAIL_MEASURE_RATE (2000) × ERRTRAIL_MEASURE_SECONDS (5)
// requests: first a closed loop of 16 clients (the CPU ratio), then an
// open loop at that rate (the p99s, and the CPU as deployed). A proxy's
// CPU is its process's user + system time over its round (the kernel's
// accounting, as getrusage), so the load generator and the upstream are
// not counted.
func TestMeasureTapRatio(t *testing.T) {
	if os.Getenv("ERRTRAIL_MEASURE") != "1" {
		t.Skip("measurement: set ERRTRAIL_MEASURE=1 to run it")
	}
	rate := envInt("ERRTRAIL_MEASURE_RATE", 2000)
	seconds := envInt("ERRTRAIL_MEASURE_SECONDS", 5)
	rounds := envInt("ERRTRAIL_MEASURE_ROUNDS", 6)
	upstream := measureUpstream(t)
	brokers := closedPort(t)
	if b := os.Getenv("ERRTRAIL_KAFKA_BROKERS"); b != "" {
		brokers = b
	}
	type proc struct {
		name, base string
		cpu        func() time.Duration
		perReq     []time.Duration // closed loop
		openReq    []time.Duration // open loop
		lat        []time.Duration
		p99        []time.Duration
	}
	start := func(role string) *proc {
		addr, admin := testenv.FreeAddr(t), testenv.FreeAddr(t)
		cmd := exec.Command(os.Args[0], "--upstream", upstream, "--http.listen-address", addr, "--metrics.listen-address", admin,
			"--kafka.brokers", brokers, "--kafka.topic", "errtrail.tap-ratio", "--agent", "measure-agent", "--log.level", "error")
		cmd.Env = append(os.Environ(), roleEnv+"="+role)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the %s proxy did not listen", role)
			}
		}
		return &proc{name: role, base: "http://" + addr, cpu: processCPU(t, cmd.Process.Pid)}
	}
	procs := []*proc{start("bare"), start("tap")}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}, Timeout: 10 * time.Second}
	for _, p := range procs { // warm the connections and the heaps
		openLoop(t, client, p.base, rate, 1)
	}
	// CPU per request: a closed loop of 16 clients on kept-alive
	// connections, as many requests per round as the open loop's, so that
	// a busy machine's queueing (more connections, more goroutines) does
	// not count as the proxy's own cost.
	for r := 0; r < rounds; r++ {
		for i := range procs {
			p := procs[(i+r)%2]
			c0 := p.cpu()
			n := closedLoop(t, client, p.base, 16, rate*seconds)
			p.perReq = append(p.perReq, (p.cpu()-c0)/time.Duration(n))
		}
	}
	// Latency: the open loop at rate, as deployed.
	for r := 0; r < rounds; r++ {
		for i := range procs {
			p := procs[(i+r)%2]
			c0 := p.cpu()
			d := openLoop(t, client, p.base, rate, seconds)
			p.openReq = append(p.openReq, (p.cpu()-c0)/time.Duration(len(d)))
			p.lat = append(p.lat, d...)
			p.p99 = append(p.p99, quantile(d, 0.99))
		}
	}
	bare, tap := procs[0], procs[1]
	ratio := func(a, b []time.Duration) []float64 {
		var out []float64
		for r := range a {
			out = append(out, float64(a[r])/float64(b[r]))
		}
		slices.Sort(out)
		return out
	}
	closed, open := ratio(tap.perReq, bare.perReq), ratio(tap.openReq, bare.openReq)
	for _, p := range procs {
		t.Logf("%-4s CPU per request, closed loop by round %v; open loop %v; open loop p50 %v p99 %v p99.9 %v; p99 by round %v",
			p.name, p.perReq, p.openReq, quantile(p.lat, .5), quantile(p.lat, .99), quantile(p.lat, .999), p.p99)
	}
	t.Logf("tap/bare CPU per request: closed loop median %.2f× (rounds %s; goal ≤ 1.2×), open loop at %d/s median %.2f× (%s); p99 tap %v, bare %v",
		closed[len(closed)/2], fmtRatios(closed), rate, open[len(open)/2], fmtRatios(open), quantile(tap.lat, .99), quantile(bare.lat, .99))
}

// closedLoop sends n requests from workers clients, each waiting for its
// answer before sending the next, and returns n.
func closedLoop(t *testing.T, c *http.Client, base string, workers, n int) int {
	body := `{"jsonrpc":"2.0","id":"r1","method":"GetTask","params":{"id":"t-1"}}`
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	var failed sync.Once
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				resp, err := c.Post(base+"/rpc?n="+strconv.Itoa(i), "application/json", strings.NewReader(body))
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if err != nil {
					failed.Do(func() { t.Errorf("request %d to %s: %v", i, base, err) })
				}
			}
		}()
	}
	wg.Wait()
	return n
}

func fmtRatios(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(s, " ")
}

// processCPU returns a reader of process pid's user + system CPU time so
// far (/proc/PID/stat, clock ticks of 10 ms).
func processCPU(t *testing.T, pid int) func() time.Duration {
	stat := fmt.Sprintf("/proc/%d/stat", pid)
	return func() time.Duration {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		var ut, st int64
		fmt.Sscan(f[11], &ut) // utime, stime: fields 14 and 15 of stat
		fmt.Sscan(f[12], &st)
		return time.Duration(ut+st) * time.Second / 100
	}
}
