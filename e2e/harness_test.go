package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/loadgen"
)

// rig is one run's share of the stack: its own Kafka topic, consumer group
// and ClickHouse database, the built binaries, and the addresses its
// ingester and alerters listen on (scraped by the test's own Prometheus,
// startPromStack).
type rig struct {
	t       *testing.T
	root    string
	id      string
	brokers []string
	chAddr  string
	prom    string // host:port of the test's Prometheus, once started
	conn    driver.Conn

	topic, group, db string
	bin              string // folder with ingest and alerter

	alerterAddrs []string // one per alerter the rig may run
	ingestAddr   string
}

// newRig finds the servers (failing in CI, skipping elsewhere when one is
// missing), builds cmd/ingest and cmd/alerter and creates the run's topic,
// with room for alerters alerters. Everything it creates is removed when the
// test ends (ERRTRAIL_KEEP_TEST_DATA=1 keeps the database and topic).
func newRig(t *testing.T, alerters int) *rig {
	t.Helper()
	return newRigOn(t, alerters, nil)
}

// newRigOn is newRig with the servers own has of its own (testenv.Own) and
// the shared stack's for the others (all of them when own is nil).
func newRigOn(t *testing.T, alerters int, own *testenv.OwnStack) *rig {
	t.Helper()
	r := &rig{t: t, root: testenv.ModuleRoot(t)}
	r.brokers = strings.Split(own.Kafka(t), ",")
	r.chAddr = strings.Split(own.ClickHouse(t), ",")[0]
	for i := 0; i < alerters; i++ {
		r.alerterAddrs = append(r.alerterAddrs, testenv.FreeAddr(t))
	}
	r.ingestAddr = testenv.FreeAddr(t)

	r.id = fmt.Sprintf("%06x", rand.Uint32()&0xffffff)
	r.topic = "errtrail.e2e." + r.id
	r.group = "errtrail-e2e-" + r.id
	r.db = "errtrail_e2e_" + r.id

	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr: []string{r.chAddr}, Protocol: clickhouse.Native,
		DialTimeout: testenv.CHDialTimeout, ReadTimeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.conn = conn
	r.bin = buildBinaries(t, r.root)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := loadgen.EnsureTopic(ctx, r.brokers, r.topic, 4); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	t.Cleanup(func() {
		if os.Getenv("ERRTRAIL_KEEP_TEST_DATA") != "" {
			t.Logf("kept database %s and topic %s", r.db, r.topic)
			conn.Close()
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+r.db)
		conn.Close()
		c := testenv.KafkaClient(t, r.brokers)
		_, _ = c.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{r.topic}})
	})
	t.Logf("run %s: topic %s, group %s, database %s; alerters on %v, ingest on %s",
		r.id, r.topic, r.group, r.db, r.alerterAddrs, r.ingestAddr)
	return r
}

var built struct {
	once sync.Once
	dir  string
	err  error
	out  []byte
}

// buildBinaries builds cmd/ingest and cmd/alerter once per test binary.
func buildBinaries(t *testing.T, root string) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "errtrail-e2e-bin-")
		if built.err != nil {
			return
		}
		start := time.Now()
		cmd := exec.Command("go", "build", "-o", built.dir+string(os.PathSeparator), "./cmd/ingest", "./cmd/alerter")
		cmd.Dir = root
		built.out, built.err = cmd.CombinedOutput()
		t.Logf("built cmd/ingest and cmd/alerter in %s", time.Since(start).Round(time.Millisecond))
	})
	if built.err != nil {
		t.Fatalf("go build ./cmd/ingest ./cmd/alerter: %v\n%s", built.err, built.out)
	}
	return built.dir
}

// startIngest runs `ingest run` on the rig's topic, group and database and
// waits until it consumes (/readyz): the schema exists from then on.
func (r *rig) startIngest(extra ...string) *proc {
	args := append([]string{"run",
		"--kafka.brokers=" + strings.Join(r.brokers, ","), "--kafka.topic=" + r.topic, "--kafka.group=" + r.group,
		"--clickhouse.addr=" + r.chAddr, "--clickhouse.database=" + r.db,
		"--http.listen-address=" + r.ingestAddr}, extra...)
	p := r.start("ingest", args...)
	p.waitHTTP("http://"+r.ingestAddr+"/readyz", 2*time.Minute)
	return p
}

// startAlerter runs alerter i of the rig on its address, with the given
// flags on top of the connection flags, and waits until it is ready and,
// when the test's Prometheus runs, scraped.
func (r *rig) startAlerter(i int, extra ...string) *proc {
	addr := r.alerterAddrs[i]
	args := append([]string{"--clickhouse.addr=" + r.chAddr, "--clickhouse.database=" + r.db,
		"--http.listen-address=" + addr}, extra...)
	p := r.start(fmt.Sprintf("alerter-%d", i), args...)
	p.waitHTTP("http://"+addr+"/readyz", time.Minute)
	if r.prom != "" {
		r.waitScraped(addr, 30*time.Second)
	}
	return p
}

// proc is a subprocess the test started; it is stopped (SIGTERM, then
// SIGKILL after 20 s) when the test ends, and the end of its log is shown
// when the test failed.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func (r *rig) start(name string, args ...string) *proc {
	t := r.t
	logPath := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	bin := name
	if strings.HasPrefix(name, "alerter") {
		bin = "alerter"
	}
	cmd := exec.Command(filepath.Join(r.bin, bin), args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{t: t, name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); f.Close(); close(p.done) }()
	t.Logf("started %s (pid %d): %s", name, cmd.Process.Pid, strings.Join(args, " "))
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("last lines of %s's log (%s):\n%s", name, logPath, tail(logPath, 30))
		}
	})
	return p
}

func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// exited reports whether the process ended, with its error.
func (p *proc) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

func (p *proc) waitHTTP(u string, within time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for {
		if done, err := p.exited(); done {
			p.t.Fatalf("%s exited while starting (%v):\n%s", p.name, err, tail(p.log, 30))
		}
		resp, err := http.Get(u)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: %s did not answer 200 within %s (last: %s):\n%s", p.name, u, within, last, tail(p.log, 30))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ---------------------------------------------------------------- Prometheus

func (r *rig) promGet(path string, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.prom+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}

type promTarget struct {
	Labels     map[string]string `json:"labels"`
	ScrapeURL  string            `json:"scrapeUrl"`
	Health     string            `json:"health"`
	LastError  string            `json:"lastError"`
	LastScrape time.Time         `json:"lastScrape"`
}

func (r *rig) targets() ([]promTarget, error) {
	var resp struct {
		Data struct {
			ActiveTargets []promTarget `json:"activeTargets"`
		} `json:"data"`
	}
	err := r.promGet("/api/v1/targets?state=active", &resp)
	return resp.Data.ActiveTargets, err
}

// waitScraped waits until Prometheus scraped the target at addr
// successfully after now.
func (r *rig) waitScraped(addr string, within time.Duration) {
	r.t.Helper()
	since := time.Now()
	deadline := since.Add(within)
	for {
		ts, err := r.targets()
		if err == nil {
			for _, tg := range ts {
				if tg.Labels["instance"] == addr && tg.Health == "up" && tg.LastScrape.After(since) {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("Prometheus did not scrape %s successfully within %s (targets: %+v, err %v)", addr, within, ts, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// promAlert is one entry of /api/v1/alerts (pending or firing).
type promAlert struct {
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"`
	ActiveAt time.Time         `json:"activeAt"`
	Value    string            `json:"value"`
}

func (r *rig) alerts() ([]promAlert, error) {
	var resp struct {
		Data struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	err := r.promGet("/api/v1/alerts", &resp)
	return resp.Data.Alerts, err
}

// ---------------------------------------------------------------- alerter metrics

// sample is one series of the alerter's /metrics.
type sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

func (s sample) String() string {
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(s.Name)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", k, s.Labels[k])
	}
	fmt.Fprintf(&b, "} %g", s.Value)
	return b.String()
}

// scrape reads the errtrail_alerter_* series of the text exposition at u.
func scrape(u string) ([]sample, error) { return scrapePrefix(u, "errtrail_alerter_") }

// scrapePrefix reads the samples of u's /metrics whose line starts with
// prefix.
func scrapePrefix(u, prefix string) ([]sample, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	var out []sample
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// parseSample parses `name{a="x",b="y"} value` (no timestamps, the only
// escapes being \\ \" \n in label values).
func parseSample(line string) (sample, error) {
	s := sample{Labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return s, errors.New("no value")
	}
	s.Name = line[:i]
	rest := line[i:]
	if rest[0] == '{' {
		rest = rest[1:]
		for {
			if rest == "" {
				return s, errors.New("unterminated labels")
			}
			if rest[0] == '}' {
				rest = rest[1:]
				break
			}
			if rest[0] == ',' {
				rest = rest[1:]
				continue
			}
			eq := strings.Index(rest, `="`)
			if eq < 0 {
				return s, errors.New("bad label")
			}
			key := rest[:eq]
			rest = rest[eq+2:]
			var v strings.Builder
			for {
				if rest == "" {
					return s, errors.New("unterminated value")
				}
				c := rest[0]
				rest = rest[1:]
				if c == '"' {
					break
				}
				if c == '\\' && rest != "" {
					switch rest[0] {
					case 'n':
						v.WriteByte('\n')
					default:
						v.WriteByte(rest[0])
					}
					rest = rest[1:]
					continue
				}
				v.WriteByte(c)
			}
			s.Labels[key] = v.String()
		}
	}
	f := strings.Fields(rest)
	if len(f) < 1 {
		return s, errors.New("no value")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return s, err
	}
	s.Value = v
	return s, nil
}

// ---------------------------------------------------------------- monitor

// monitor polls the alerter's /metrics and Prometheus's /api/v1/alerts and
// keeps every observation, so a test can ask both "did this ever happen"
// (expected verdicts and alerts) and "did this never happen" (alerts that
// must not fire) over the whole run.
type monitor struct {
	mu       sync.Mutex
	verdicts []verdictObs
	alerts   []alertObs
	errs     map[string]int
	stop     chan struct{}
	done     sync.WaitGroup
}

type verdictObs struct {
	At      time.Time
	Samples []sample
}

type alertObs struct {
	At     time.Time
	Alerts []promAlert
}

func (r *rig) watch(every time.Duration) *monitor {
	m := &monitor{errs: map[string]int{}, stop: make(chan struct{})}
	poll := func(name string, f func() error) {
		defer m.done.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if err := f(); err != nil {
				m.mu.Lock()
				m.errs[name+": "+err.Error()]++
				m.mu.Unlock()
			}
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}
	m.done.Add(2)
	go poll("alerter", func() error {
		ss, err := scrape("http://" + r.alerterAddrs[0] + "/metrics")
		if err != nil {
			return err
		}
		// Ingest's lag beside the verdicts, for the failure messages that
		// explain a verdict (a test that stops ingest makes this fail:
		// not counted as a poll error).
		if lag, err := scrapePrefix("http://"+r.ingestAddr+"/metrics", ingestLag+" "); err == nil {
			ss = append(ss, lag...)
		}
		m.mu.Lock()
		m.verdicts = append(m.verdicts, verdictObs{time.Now(), ss})
		m.mu.Unlock()
		return nil
	})
	go poll("prometheus", func() error {
		as, err := r.alerts()
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.alerts = append(m.alerts, alertObs{time.Now(), as})
		m.mu.Unlock()
		return nil
	})
	r.t.Cleanup(m.close)
	return m
}

func (m *monitor) close() {
	select {
	case <-m.stop:
		return
	default:
	}
	close(m.stop)
	m.done.Wait()
}

// labelsMatch reports whether have has every label of want ("*" matches any
// present value).
func labelsMatch(have, want map[string]string) bool {
	for k, v := range want {
		hv, ok := have[k]
		if !ok || (v != "*" && hv != v) {
			return false
		}
	}
	return true
}

// firstSample returns the first observation at or after since of a series
// name with the labels that satisfies ok.
func (m *monitor) firstSample(since time.Time, name string, labels map[string]string, ok func(float64) bool) (time.Time, sample, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.verdicts {
		if o.At.Before(since) {
			continue
		}
		for _, s := range o.Samples {
			if s.Name == name && labelsMatch(s.Labels, labels) && ok(s.Value) {
				return o.At, s, true
			}
		}
	}
	return time.Time{}, sample{}, false
}

// matchingSamples returns every observed sample of name with labels that
// satisfies ok, with the time it was seen.
func (m *monitor) matchingSamples(name string, labels map[string]string, ok func(float64) bool) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, o := range m.verdicts {
		for _, s := range o.Samples {
			if s.Name == name && labelsMatch(s.Labels, labels) && ok(s.Value) {
				out = append(out, o.At.Format("15:04:05")+" "+s.String())
			}
		}
	}
	return out
}

// ingestLag is ingest's consumer lag gauge, which the monitor keeps beside
// the alerter's samples.
const ingestLag = "errtrail_ingest_consumer_lag_seconds"

// samplesBetween lists, observation by observation from from to to, the
// samples of the names (the alerter's ones with labels, the others with
// any), each as "15:04:05 name{labels} value".
func (m *monitor) samplesBetween(from, to time.Time, labels map[string]string, names ...string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, o := range m.verdicts {
		if o.At.Before(from) || o.At.After(to) {
			continue
		}
		for _, s := range o.Samples {
			if !slices.Contains(names, s.Name) {
				continue
			}
			if strings.HasPrefix(s.Name, "errtrail_alerter_") && !labelsMatch(s.Labels, labels) {
				continue
			}
			out = append(out, o.At.Format("15:04:05")+" "+s.String())
		}
	}
	return out
}

// firstAlert returns the first observation of an alert with the labels in
// one of the states.
func (m *monitor) firstAlert(labels map[string]string, states ...string) (time.Time, promAlert, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.alerts {
		for _, a := range o.Alerts {
			if !labelsMatch(a.Labels, labels) {
				continue
			}
			for _, s := range states {
				if a.State == s {
					return o.At, a, true
				}
			}
		}
	}
	return time.Time{}, promAlert{}, false
}

// allAlerts returns every distinct (labels, state) seen, with the first time.
func (m *monitor) allAlerts(match func(promAlert) bool) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, o := range m.alerts {
		for _, a := range o.Alerts {
			if !match(a) {
				continue
			}
			key := fmt.Sprintf("%s %v", a.State, sample{Name: "ALERTS", Labels: a.Labels}.String())
			key = strings.TrimSuffix(key, " 0")
			if !seen[key] {
				seen[key] = true
				out = append(out, o.At.Format("15:04:05")+" "+key)
			}
		}
	}
	return out
}

func (m *monitor) pollErrors() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for k, v := range m.errs {
		out[k] = v
	}
	return out
}

// ---------------------------------------------------------------- misc

func portFree(addr string) bool {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// renameAgents gives every agent of sc the name rename(old) and updates the
// callers, bursts and faults that refer to it, so several scenarios can run
// at once on one topic without sharing an agent.
func renameAgents(sc *loadgen.Scenario, rename func(string) string) map[string]string {
	names := map[string]string{}
	for i := range sc.Agents {
		a := &sc.Agents[i]
		old := a.Name
		a.Name = rename(old)
		names[old] = a.Name
		if a.Instance == old+"-0" {
			a.Instance = a.Name + "-0"
		}
	}
	for i := range sc.Callers {
		// A new slice: callers expanded from one entry (count: N) share it.
		agents := make([]string, len(sc.Callers[i].Agents))
		for j, n := range sc.Callers[i].Agents {
			agents[j] = names[n]
		}
		sc.Callers[i].Agents = agents
	}
	for i := range sc.Bursts {
		sc.Bursts[i].Agent = names[sc.Bursts[i].Agent]
	}
	for i := range sc.Faults {
		sc.Faults[i].Agent = names[sc.Faults[i].Agent]
	}
	return names
}

// query runs sql and scans each row with scan.
func (r *rig) query(sql string, scan func(driver.Rows) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rows, err := r.conn.Query(ctx, sql)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// stored counts the rows of the run's database: errors and dead letters,
// each event once (FINAL merges a replayed copy).
func (r *rig) stored() (errs, dead uint64, err error) {
	err = r.query(fmt.Sprintf("SELECT (SELECT count() FROM %[1]s.errors FINAL), (SELECT count() FROM %[1]s.dead_letter FINAL)", r.db),
		func(rows driver.Rows) error { return rows.Scan(&errs, &dead) })
	return errs, dead, err
}

// matchingSamplesFunc is matchingSamples restricted to the label sets keep
// accepts.
func (m *monitor) matchingSamplesFunc(name string, labels map[string]string, ok func(float64) bool, keep func(map[string]string) bool) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, o := range m.verdicts {
		for _, s := range o.Samples {
			if s.Name == name && labelsMatch(s.Labels, labels) && ok(s.Value) && keep(s.Labels) {
				out = append(out, o.At.Format("15:04:05")+" "+s.String())
			}
		}
	}
	return out
}

// firingEpisodes returns the [start, end) of each stretch of polls in which
// Prometheus reported an alert with labels as firing; end is zero while it
// still fires at the last poll.
func (m *monitor) firingEpisodes(labels map[string]string) [][2]time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out [][2]time.Time
	on := false
	for _, o := range m.alerts {
		firing := false
		for _, a := range o.Alerts {
			if a.State == "firing" && labelsMatch(a.Labels, labels) {
				firing = true
				break
			}
		}
		switch {
		case firing && !on:
			out = append(out, [2]time.Time{o.At})
		case !firing && on:
			out[len(out)-1][1] = o.At
		}
		on = firing
	}
	return out
}
