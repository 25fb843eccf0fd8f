// Command cost measures the whole cost of an event (issue 16 §3): the
// consumer's own CPU and the ClickHouse server's CPU, side by side, for
// four consumers draining the same backlog topic.
//
//	cd bench/cost && go run . [-events 1000000] [-rounds 3] [-consumers ingest,floor,naive,kafka-engine]
//
// It builds cmd/ingest and cmd/loadgen from the repository, floods one
// topic (errtrail.cost-<id>), then per round drains it with each consumer
// alone, each into a fresh database (errtrail_cost_<id>_...) with its own
// consumer group from the first offset, the order reversed every other
// round. It prints per run: own CPU, server CPU above its idle rate, total
// (µs per event), events/s, ratios to the transport floor of the same round
// and the load average; then medians per consumer. Everything it creates
// is dropped at the end. See docs/performance.md, "The whole cost of an
// event".
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"errtrail.bench/procstat"
	"github.com/segmentio/kafka-go"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "floor" || os.Args[1] == "naive") {
		if err := childMain(os.Args[1], os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, os.Args[1]+":", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cost:", err)
		os.Exit(1)
	}
}

type harness struct {
	root, tmp, self   string
	brokers, ch, http string
	port              int
	id                string
	topic             string
	n                 int64
	hwm               map[int]int64
	srvPid            int   // the first (or only) server's
	srvPids           []int // every server of the cluster (-cluster), else srvPid
	cluster           string
	idle              time.Duration
	groups            []string
	kc                *kafka.Client
}

type result struct {
	consumer, load       string
	round                int
	own, srv, wall, join time.Duration
	byThread             map[string]time.Duration
	insertCPU            time.Duration // server CPU of the consumer's INSERTs (query_log), when known
	inserts              int
	rows                 int64
	skipped              string
	idle                 float64 // the server's CPU per second of wall just before the drain
}

func (r result) perEvent(d time.Duration, n int64) float64 {
	return float64(d.Nanoseconds()) / 1e3 / float64(n)
}

var allConsumers = []string{"ingest", "floor", "naive", "kafka-engine"}

func run() error {
	events := int64(1_000_000)
	rounds, idle, port := 3, 3*time.Second, 19181
	layout := "" // -cluster: a layout of scripts/cluster instead of the stack's one server
	consumers := strings.Join(allConsumers, ",")
	base := "" // -base: the revision the ingest-base consumer is built from
	for i := 1; i < len(os.Args); i++ {
		a := os.Args[i]
		val := func() string {
			if i+1 >= len(os.Args) {
				fmt.Fprintln(os.Stderr, a, "needs a value")
				os.Exit(2)
			}
			i++
			return os.Args[i]
		}
		var err error
		switch strings.TrimLeft(a, "-") {
		case "events":
			events, err = strconv.ParseInt(val(), 10, 64)
		case "rounds":
			rounds, err = strconv.Atoi(val())
		case "consumers":
			consumers = val()
		case "idle":
			idle, err = time.ParseDuration(val())
		case "port":
			port, err = strconv.Atoi(val())
		case "cluster":
			layout = strings.ToUpper(val())
		case "base":
			base = val()
		case "h", "help":
			fmt.Println("usage: go run . [-events N (1000000)] [-rounds R (3)] [-consumers " + strings.Join(allConsumers, ",") + "] [-idle 3s] [-port 19181] [-cluster A|B] [-base REV (adds the consumer ingest-base: cmd/ingest and its schema at git revision REV)]")
			return nil
		default:
			err = fmt.Errorf("unknown flag %s", a)
		}
		if err != nil {
			return err
		}
	}
	h := &harness{n: events, idle: idle, port: port, id: strconv.FormatInt(time.Now().Unix(), 10)}
	var err error
	if h.root, err = repoRoot(); err != nil {
		return err
	}
	if base == "" && strings.Contains(","+consumers+",", ",ingest-base,") {
		return fmt.Errorf("the consumer ingest-base needs -base REV")
	}
	stack := os.Getenv("ERRTRAIL_STACK_DIR") // a worktree without a stack of its own names the lead's
	if stack == "" {
		stack = filepath.Join(h.root, ".stack")
	}
	env, err := readEnv(filepath.Join(stack, "env"))
	if err != nil {
		return err
	}
	for k, v := range env {
		os.Setenv(k, v)
	}
	h.brokers, h.ch, h.http = env["ERRTRAIL_KAFKA_BROKERS"], env["ERRTRAIL_CLICKHOUSE_ADDR"], env["ERRTRAIL_CLICKHOUSE_HTTP"]
	if layout == "" {
		if h.srvPid, err = procstat.StackServer(h.root, h.ch); err != nil {
			return fmt.Errorf("clickhouse-server pid: %w", err)
		}
		h.srvPids = []int{h.srvPid}
	} else {
		// Every node of the layout counts: the one ingest talks to and the
		// ones the Distributed inserts reach.
		cenv, err := readEnv(filepath.Join(stack, "cluster/env"))
		if err != nil {
			return fmt.Errorf("%w (scripts/cluster up)", err)
		}
		nodes := strings.Split(cenv["ERRTRAIL_CLUSTER_"+layout+"_NODES"], ",")
		h.cluster = cenv["ERRTRAIL_CLUSTER_"+layout+"_NAME"]
		if h.cluster == "" || nodes[0] == "" {
			return fmt.Errorf("no cluster layout %q in .stack/cluster/env", layout)
		}
		h.ch, h.http = nodes[0], strings.Split(cenv["ERRTRAIL_CLUSTER_"+layout+"_HTTP"], ",")[0]
		for _, n := range nodes {
			pid, err := procstat.Listening(n)
			if err != nil {
				return fmt.Errorf("clickhouse-server pid of %s: %w", n, err)
			}
			h.srvPids = append(h.srvPids, pid)
		}
		h.srvPid = h.srvPids[0]
	}
	h.kc = &kafka.Client{Addr: kafka.TCP(strings.Split(h.brokers, ",")...), Timeout: 30 * time.Second}
	if h.self, err = os.Executable(); err != nil {
		return err
	}
	h.tmp, err = os.MkdirTemp("", "errtrail-cost-")
	if err != nil {
		return err
	}
	h.topic = "errtrail.cost-" + h.id
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "cost: %v received, stopping and cleaning up\n", s)
		cancel()
	}()
	defer h.cleanup()

	for _, b := range []string{"ingest", "loadgen"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(h.tmp, b), "./cmd/"+b)
		cmd.Dir, cmd.Stderr = h.root, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", b, err)
		}
	}
	if base != "" {
		if err := h.buildBase(base); err != nil {
			return err
		}
	}
	ver, _ := h.query("SELECT version()")
	fmt.Printf("# %s, %d events, %d rounds, ClickHouse %s (pids %v), Kafka %s, load %s\n",
		time.Now().UTC().Format(time.RFC3339), h.n, rounds, strings.TrimSpace(ver), h.srvPids, h.brokers, procstat.LoadAvg())
	if h.cluster != "" {
		fmt.Printf("# cluster %s: ingest and the floor and naive consumers insert through Distributed tables on %s (synchronously); server CPU is every node's; the Kafka engine is skipped\n", h.cluster, h.ch)
	}
	fmt.Printf("# µs/event: own = the consumer's process (user+sys); server = clickhouse-server over the drain minus its idle rate of the %v before; total = own + server\n", h.idle)

	t0 := time.Now()
	lg := exec.CommandContext(ctx, filepath.Join(h.tmp, "loadgen"), "flood", "--events", strconv.FormatInt(h.n, 10),
		"--kafka.topic", h.topic, "--progress", "0")
	if out, err := lg.CombinedOutput(); err != nil {
		return fmt.Errorf("loadgen flood: %v\n%s", err, out)
	}
	if h.hwm, err = h.endOffsets(ctx); err != nil {
		return err
	}
	var sum int64
	for _, o := range h.hwm {
		sum += o
	}
	if sum != h.n {
		return fmt.Errorf("topic %s holds %d messages, want %d", h.topic, sum, h.n)
	}
	fmt.Printf("# flooded %s: %d events in %d partitions in %.1f s\n", h.topic, sum, len(h.hwm), time.Since(t0).Seconds())

	order := strings.Split(consumers, ",")
	var all []result
	for r := 1; r <= rounds; r++ {
		o := slices.Clone(order)
		if r%2 == 0 {
			slices.Reverse(o)
		}
		fmt.Printf("\n## round %d: %s\n", r, strings.Join(o, " → "))
		var got []result
		for _, c := range o {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			res, err := h.drain(ctx, c, r)
			if err != nil {
				return fmt.Errorf("round %d %s: %w", r, c, err)
			}
			got = append(got, res)
			if res.skipped != "" {
				fmt.Printf("  %-13s SKIPPED: %s\n", c, res.skipped)
			} else {
				fmt.Printf("  %-13s done: %.2f s, %.0f events/s\n", c, res.wall.Seconds(), float64(h.n)/res.wall.Seconds())
			}
		}
		h.printRound(got)
		all = append(all, got...)
	}
	h.printMedians(all, order)
	return nil
}

// drain runs one consumer over the whole topic.
func (h *harness) drain(ctx context.Context, consumer string, round int) (result, error) {
	res := result{consumer: consumer, round: round}
	name := fmt.Sprintf("%s_%d_%s", h.id, round, strings.ReplaceAll(consumer, "-", "_"))
	db := "errtrail_cost_" + name
	group := "errtrail.cost-" + h.id + "." + strconv.Itoa(round) + "." + consumer
	h.groups = append(h.groups, group)
	defer h.exec("DROP DATABASE IF EXISTS " + db + h.onCluster())

	// Set up outside the measured window.
	var start func() (*exec.Cmd, error)
	var done func() (bool, error)
	var stopper func()
	var rows func() (int64, error)
	child := func(args ...string) func() (*exec.Cmd, error) {
		return func() (*exec.Cmd, error) {
			cmd := exec.Command(args[0], args[1:]...)
			f, err := os.Create(filepath.Join(h.tmp, name+".log"))
			if err != nil {
				return nil, err
			}
			cmd.Stdout, cmd.Stderr = f, f
			return cmd, cmd.Start()
		}
	}
	committed := func() (bool, error) { return h.caughtUp(ctx, group) }
	count := func(tables ...string) func() (int64, error) {
		return func() (int64, error) {
			var n int64
			for _, t := range tables {
				s, err := h.query("SELECT count() FROM " + db + "." + t)
				if err != nil {
					return 0, err
				}
				v, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
				n += v
			}
			return n, nil
		}
	}
	switch consumer {
	case "ingest", "ingest-base":
		ing := filepath.Join(h.tmp, consumer)
		chFlags := []string{"--clickhouse.database", db}
		if h.cluster != "" {
			chFlags = append(chFlags, "--clickhouse.addr", h.ch, "--clickhouse.cluster", h.cluster)
		}
		if out, err := exec.Command(ing, append([]string{"migrate"}, chFlags...)...).CombinedOutput(); err != nil {
			return res, fmt.Errorf("ingest migrate: %v\n%s", err, out)
		}
		start = child(append(append([]string{ing, "run"}, chFlags...), "--kafka.group", group, "--kafka.topic", h.topic,
			"--http.listen-address", fmt.Sprintf("127.0.0.1:%d", h.port))...)
		done, rows = committed, count("errors", "dead_letter")
	case "floor", "naive":
		cols := "value String"
		if consumer == "naive" {
			cols = NaiveColumns
		}
		order := "tuple()"
		if consumer == "naive" {
			order = "(agent, observed_at)"
		}
		ddl := []string{"CREATE DATABASE " + db, "CREATE TABLE " + db + ".t (" + cols + ") ENGINE = MergeTree ORDER BY " + order}
		if h.cluster != "" {
			// As ingest's tables: replicated local tables and a
			// Distributed one over them, written synchronously.
			oc := h.onCluster()
			ddl = []string{"CREATE DATABASE " + db + oc,
				"CREATE TABLE " + db + ".t_local" + oc + " (" + cols + ") ENGINE = ReplicatedMergeTree('/errtrail_cost/{shard}/" + db + "/t', '{replica}') ORDER BY " + order,
				"CREATE TABLE " + db + ".t" + oc + " AS " + db + ".t_local ENGINE = Distributed(" + h.cluster + ", " + db + ", t_local, rand())"}
		}
		for _, q := range ddl {
			if err := h.exec(q); err != nil {
				return res, err
			}
		}
		args := []string{h.self, consumer, "-brokers", h.brokers, "-clickhouse", h.ch, "-topic", h.topic, "-group", group, "-table", db + ".t"}
		if h.cluster != "" {
			args = append(args, "-sync")
		}
		start = child(args...)
		done, rows = committed, count("t")
	case "kafka-engine":
		if h.cluster != "" {
			res.skipped = "not run on a cluster"
			return res, nil
		}
		const cols = "v UInt8, event_id String, observed_at UInt64, agent String, endpoint String, caller String, method String, attempt UInt32"
		for _, q := range []string{
			"CREATE DATABASE " + db,
			"CREATE TABLE " + db + ".t (" + cols + ") ENGINE = MergeTree ORDER BY (agent, observed_at)",
		} {
			if err := h.exec(q); err != nil {
				return res, err
			}
		}
		// librdkafka's auto.offset.reset defaults to latest and 18.16 has no
		// table setting for it: give the group committed offsets at the
		// partitions' first offsets before it exists, so it reads the
		// backlog.
		if err := h.commitStart(ctx, group); err != nil {
			return res, fmt.Errorf("pre-commit group offsets: %w", err)
		}
		// The Kafka table joins the group and prefetches as soon as it
		// exists, so it is created after the idle rate was taken, with
		// the view.
		start = func() (*exec.Cmd, error) {
			// 18.16's engine always skips unknown fields (StorageKafka sets
			// input_format_skip_unknown_fields for its stream).
			if err := h.exec(fmt.Sprintf("CREATE TABLE %s.queue (%s) ENGINE = Kafka('%s', '%s', '%s', 'JSONEachRow')", db, cols, h.brokers, h.topic, group)); err != nil {
				return nil, err
			}
			return nil, h.exec("CREATE MATERIALIZED VIEW " + db + ".mv TO " + db + ".t AS SELECT * FROM " + db + ".queue")
		}
		cnt := count("t")
		done = func() (bool, error) { n, err := cnt(); return n >= h.n, err }
		rows = cnt
		stopper = func() {
			_ = h.exec("DROP TABLE IF EXISTS " + db + ".mv")
			_ = h.exec("DROP TABLE IF EXISTS " + db + ".queue")
		}
	default:
		return res, fmt.Errorf("unknown consumer %q", consumer)
	}

	// Let the server settle (merges of earlier runs, a dropped database)
	// before its idle rate is taken.
	for i := 0; i < 40; i++ {
		s, err := h.query("SELECT count() FROM system.merges")
		if err != nil || strings.TrimSpace(s) == "0" {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	res.load = procstat.LoadAvg()
	i0, _ := h.serverCPU()
	w0 := time.Now()
	time.Sleep(h.idle)
	i1, _ := h.serverCPU()
	idleRate := float64(i1-i0) / float64(time.Since(w0))
	res.idle = idleRate

	launched := time.Now()
	sCreate, _ := h.serverCPU()
	thCreate := h.serverThreads()
	cmd, err := start()
	if err != nil {
		return res, err
	}
	pid := 0
	if cmd != nil {
		pid = cmd.Process.Pid
		defer func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		}()
	} else if stopper != nil {
		defer stopper()
	}
	// The window opens when the group is Stable with a member: start-up,
	// migration checks and the join stay outside it (for the Kafka engine
	// the server's CPU counts from its CREATE, since librdkafka fetches
	// from the join on).
	if err := h.waitStable(ctx, group, 90*time.Second, cmd); err != nil {
		if consumer == "kafka-engine" {
			res.skipped = err.Error() + h.kafkaEngineLog()
			return res, nil
		}
		return res, err
	}
	t0 := time.Now()
	res.join = t0.Sub(launched)
	own0, _ := procstat.CPU(pid)
	s0, _ := h.serverCPU()
	th0 := h.serverThreads()
	if cmd == nil {
		s0, th0 = sCreate, thCreate
	}
	every := 100 * time.Millisecond
	if consumer == "kafka-engine" {
		every = 250 * time.Millisecond
	}
	deadline := t0.Add(30 * time.Minute)
	var lastProgress time.Time
	var lastRows int64 = -1
	for {
		ok, err := done()
		if err != nil {
			return res, err
		}
		if ok {
			break
		}
		if cmd != nil && cmd.ProcessState != nil || time.Now().After(deadline) || ctx.Err() != nil {
			return res, fmt.Errorf("drain did not finish (see %s)", filepath.Join(h.tmp, name+".log"))
		}
		if consumer == "kafka-engine" && time.Since(t0) > 60*time.Second && time.Since(lastProgress) > 60*time.Second {
			n, _ := rows()
			if n == lastRows {
				res.skipped = fmt.Sprintf("no progress for 60 s at %d of %d rows%s", n, h.n, h.kafkaEngineLog())
				return res, nil
			}
			lastRows, lastProgress = n, time.Now()
		}
		time.Sleep(every)
	}
	t1 := time.Now()
	own1, _ := procstat.CPU(pid)
	s1, _ := h.serverCPU()
	th1 := h.serverThreads()
	res.wall = t1.Sub(t0)
	srv := s1 - s0
	idleFor := res.wall
	if cmd == nil {
		idleFor = t1.Sub(launched)
	}
	res.srv = srv - time.Duration(idleRate*float64(idleFor))
	if cmd != nil {
		res.own = own1 - own0
	} else {
		// The Kafka engine is the server: its CPU is all server CPU.
		res.own = 0
	}
	res.byThread = threadDelta(th0, th1)
	var sum time.Duration
	for _, d := range res.byThread {
		sum += d
	}
	res.byThread["gone"] = srv - sum

	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		werr := make(chan error, 1)
		go func() { werr <- cmd.Wait() }()
		select {
		case err := <-werr:
			if err != nil {
				fmt.Fprintf(os.Stderr, "  %s exited: %v (log %s)\n", consumer, err, filepath.Join(h.tmp, name+".log"))
			}
		case <-time.After(45 * time.Second):
			_ = cmd.Process.Kill()
			<-werr
		}
	} else if stopper != nil {
		stopper()
	}
	if res.rows, err = rows(); err != nil {
		return res, err
	}
	if res.rows != h.n {
		fmt.Fprintf(os.Stderr, "  WARNING %s stored %d rows, want %d\n", consumer, res.rows, h.n)
	}
	// The INSERTs' own CPU (query_log): on a server other work shares, the
	// one server figure that counts only this drain's statements. For
	// ingest it would include every view on landing (they run in the
	// INSERT), not the merges; but 18.16 logs a query only with
	// log_queries = 1, which floor and naive set and ingest does not, so
	// there ingest's is absent ("-"): bench/views measures the views so.
	if into := map[string]string{"floor": "t", "naive": "t", "ingest": "landing", "ingest-base": "landing"}[consumer]; into != "" {
		_ = h.exec("SYSTEM FLUSH LOGS")
		s, err := h.query(fmt.Sprintf(`SELECT count(), sum(arraySum(arrayFilter((v, k) -> k IN ('UserTimeMicroseconds', 'SystemTimeMicroseconds'), ProfileEvents.Values, ProfileEvents.Names)))
			FROM system.query_log WHERE type = 2 AND event_date >= yesterday() AND query LIKE 'INSERT INTO %s.%s%%'`, db, into))
		if err == nil {
			f := strings.Fields(s)
			if len(f) == 2 {
				res.inserts, _ = strconv.Atoi(f[0])
				us, _ := strconv.ParseInt(f[1], 10, 64)
				res.insertCPU = time.Duration(us) * time.Microsecond
			}
		}
	}
	return res, nil
}

// kafkaEngineLog returns the server log's recent lines about the Kafka
// engine, to say why it did not consume.
func (h *harness) kafkaEngineLog() string {
	var out []string
	for _, f := range []string{"clickhouse-server.err.log", "clickhouse-server.log"} {
		fh, err := os.Open(filepath.Join(h.root, ".stack/clickhouse", f))
		if err != nil {
			continue
		}
		st, _ := fh.Stat()
		if st.Size() > 4<<20 {
			_, _ = fh.Seek(st.Size()-4<<20, io.SeekStart)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if strings.Contains(l, "Kafka") || strings.Contains(l, "rdk") || strings.Contains(l, h.topic) {
				out = append(out, l)
			}
		}
		fh.Close()
	}
	if len(out) > 8 {
		out = out[len(out)-8:]
	}
	if len(out) == 0 {
		return " (no Kafka lines in the server log)"
	}
	return "\n    " + strings.Join(out, "\n    ")
}

func (h *harness) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if s, err := h.query("SELECT name FROM system.databases WHERE startsWith(name, 'errtrail_cost_" + h.id + "_')"); err == nil {
		for _, db := range strings.Fields(s) {
			_ = h.exec("DROP DATABASE IF EXISTS " + db + h.onCluster())
		}
	}
	if h.kc != nil && h.topic != "" {
		if len(h.groups) > 0 {
			if _, err := h.kc.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: h.groups}); err != nil {
				fmt.Fprintln(os.Stderr, "delete groups:", err)
			}
		}
		if _, err := h.kc.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{h.topic}}); err != nil {
			fmt.Fprintln(os.Stderr, "delete topic:", err)
		}
	}
	if h.tmp != "" && os.Getenv("COST_KEEP_LOGS") == "" {
		os.RemoveAll(h.tmp)
	}
	fmt.Printf("# cleaned up: databases errtrail_cost_%s_*, topic %s, %d groups\n", h.id, h.topic, len(h.groups))
}

// buildBase builds cmd/ingest as it was at git revision rev (its schema
// with it) into the temporary directory as ingest-base, from a copy of
// the tree that git archive writes: the repository is only read.
func (h *harness) buildBase(rev string) error {
	src := filepath.Join(h.tmp, "base-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	sh := fmt.Sprintf("git -C %q archive --format=tar %q | tar -x -C %q", h.root, rev, src)
	if out, err := exec.Command("sh", "-c", sh).CombinedOutput(); err != nil {
		return fmt.Errorf("git archive %s: %v\n%s", rev, err, out)
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(h.tmp, "ingest-base"), "./cmd/ingest")
	cmd.Dir, cmd.Stderr = src, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build ingest at %s: %w", rev, err)
	}
	fmt.Printf("# ingest-base: cmd/ingest at %s\n", rev)
	return nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/errtrail/errtrail\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("run inside the errtrail repository (bench/cost)")
		}
	}
}

func readEnv(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w (scripts/stack up writes it)", err)
	}
	env := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "export "))
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(k, "#") {
			env[k] = strings.Trim(v, `"'`)
		}
	}
	return env, nil
}
