package ingest_test

// Issue 11 end to end: every planted secret at every location (the matrix of
// parse/leakgen_test.go, testdata/redaction/planted.json) goes through the
// REAL Kafka, the real cmd/ingest binary and the real ClickHouse; then every
// column of every table of the test's database, the binary's log and its
// /metrics are searched for the planted values. Like the other integration
// tests it needs the local stack (scripts/stack up): outside CI a missing
// server skips it, in CI it fails (internal/testenv).
//
//	go test ./ingest -run TestPlantedSecretsNeverStored -v
//	ERRTRAIL_LEAK_REPORT=/tmp/leak-e2e.txt go test ./ingest -run TestPlantedSecretsNeverStored

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/parse"
	"github.com/segmentio/kafka-go"
)

// leakDoc is what parse's TestExportPlantedMessages writes.
type leakDoc struct {
	ObservedAtMS int64 `json:"observed_at_ms"`
	Secrets      []struct {
		Type  string `json:"type"`
		Class string `json:"class"`
		Value string `json:"value"`
	} `json:"secrets"`
	Locations []struct {
		Name string          `json:"name"`
		Dead parse.ErrReason `json:"dead"`
	} `json:"locations"`
	Cells []struct {
		ID       string `json:"id"`
		Secret   int    `json:"secret"`
		Location int    `json:"location"`
		Message  struct {
			Value   []byte            `json:"value"`
			Headers []parse.MsgHeader `json:"headers"`
		} `json:"message"`
		Needles []string `json:"needles"`
	} `json:"cells"`
}

// lockedBuffer collects the binary's log.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestPlantedSecretsNeverStored(t *testing.T) {
	s := newStack(t, 3) // a fresh topic and a fresh database, or skip/fail (testenv)
	chHTTP := testenv.ClickHouseHTTP(t)
	root := testenv.ModuleRoot(t)
	tmp := t.TempDir()

	// 1. The planted messages, from the generator the unit test uses.
	export := filepath.Join(tmp, "planted-messages.json")
	gen := exec.Command("go", "test", "-count=1", "-run", "^TestExportPlantedMessages$", "./parse",
		"-args", "-leak.export="+export)
	gen.Dir = root
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("exporting the planted messages (go test ./parse -run TestExportPlantedMessages): %v\n%s", err, out)
	}
	raw, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	var doc leakDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	cellByID := map[string]int{}
	for i, c := range doc.Cells {
		cellByID[c.ID] = i
	}

	// 2. The deployment's redaction key: it must never be stored either.
	keyBytes := make([]byte, 32)
	if _, err := rand.Read(keyBytes); err != nil {
		t.Fatal(err)
	}
	key := hex.EncodeToString(keyBytes)
	keyFile := filepath.Join(tmp, "redact.key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// 3. The real binary.
	bin := filepath.Join(tmp, "ingest")
	build := exec.Command("go", "build", "-o", bin, "./cmd/ingest")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/ingest: %v\n%s", err, out)
	}
	help, _ := exec.Command(bin, "run", "--help").CombinedOutput()
	args := []string{"run",
		"--kafka.brokers", strings.Join(s.brokers, ","), "--kafka.topic", s.topic, "--kafka.group", s.group,
		"--kafka.session-timeout", "6s",
		"--clickhouse.addr", s.chAddr, "--clickhouse.database", s.sopt.Database,
		"--batch.rows", "2000", "--batch.wait", "300ms", "--shutdown.timeout", "30s", "--log.level", "debug"}
	if strings.Contains(string(help), "redact.key-file") {
		args = append(args, "--redact.key-file", keyFile)
	} else {
		t.Errorf("cmd/ingest has no --redact.key-file flag (issue 11); running with ERRTRAIL_REDACT_KEY_FILE only")
	}
	addr := testenv.FreeAddr(t)
	args = append(args, "--http.listen-address", addr)

	// 4. Produce, run, wait until every message is accounted for.
	msgs := make([]kafka.Message, len(doc.Cells))
	for i, c := range doc.Cells {
		hs := make([]kafka.Header, len(c.Message.Headers))
		for j, h := range c.Message.Headers {
			hs[j] = kafka.Header{Key: h.Key, Value: h.Value}
		}
		msgs[i] = kafka.Message{Key: []byte(c.ID), Value: c.Message.Value, Headers: hs}
	}
	s.produce(t, msgs)
	offsets := readBackKeys(t, s)
	if len(offsets) != len(msgs) {
		t.Fatalf("the topic holds %d messages for %d produced (a producer retry duplicated some); run again", len(offsets), len(msgs))
	}

	var log lockedBuffer
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ERRTRAIL_REDACT_KEY_FILE="+keyFile)
	cmd.Stdout = &log
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	want := uint64(len(msgs))
	deadline := time.Now().Add(4 * time.Minute)
	for {
		c, err := s.counts(t)
		if err == nil && c.errors+c.dead >= want {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("cmd/ingest exited early (%v); log:\n%s", err, log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 4m for %d rows; have %+v (err %v); log:\n%s", want, c, err, tail(log.String(), 4000))
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // let a duplicate, if any, arrive before counting
	metrics := scrape(t, "http://"+addr+"/metrics")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("cmd/ingest after SIGTERM: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("cmd/ingest did not stop within a minute of SIGTERM")
	}

	// 5. Exactly one row per message, in the table its decode says, and
	// landing received each message once.
	if c, err := s.counts(t); err == nil && c.landed != want {
		t.Errorf("landing received %d rows for %d messages", c.landed, want)
	}
	ctx := context.Background()
	db := s.sopt.Database
	rowsOf := make([][]string, len(doc.Cells))
	q := func(query string, table string) {
		rows, err := s.conn.Query(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var p int32
			var o int64
			var reason string
			if err := rows.Scan(&p, &o, &reason); err != nil {
				t.Fatal(err)
			}
			ci, ok := cellByID[offsets[fmt.Sprintf("%d/%d", p, o)]]
			if !ok {
				t.Errorf("%s row at partition %d offset %d matches no produced message", table, p, o)
				continue
			}
			rowsOf[ci] = append(rowsOf[ci], table+":"+reason)
		}
	}
	q("SELECT kafka_partition, kafka_offset, '' FROM "+db+".errors", "errors")
	q("SELECT kafka_partition, kafka_offset, dl_reason FROM "+db+".dead_letter", "dead_letter")
	var rowFaults []string
	for i, c := range doc.Cells {
		l := doc.Locations[c.Location]
		w := "errors:"
		if l.Dead != "" {
			w = "dead_letter:" + string(l.Dead)
		}
		if got := rowsOf[i]; len(got) != 1 || got[0] != w {
			rowFaults = append(rowFaults, fmt.Sprintf("  %s × %s: rows %v, want [%s]", doc.Secrets[c.Secret].Type, l.Name, got, w))
		}
	}
	if len(rowFaults) > 0 {
		t.Errorf("%d of %d messages do not have exactly one row where expected:\n%s", len(rowFaults), len(doc.Cells),
			strings.Join(rowFaults[:min(len(rowFaults), 60)], "\n"))
	}

	// 6. Search every column of every table, the log and /metrics.
	var m matcher
	for _, c := range doc.Cells {
		for _, n := range c.Needles {
			m.add(n, c.Secret)
		}
	}
	const keySecret = -1 // the redaction key itself
	m.add(key, keySecret)
	secretName := func(si int) string {
		if si == keySecret {
			return "redaction key"
		}
		return doc.Secrets[si].Type
	}

	type hit struct {
		secret int
		cell   int // -1 when the row is not known
		where  string
	}
	var hits []hit
	tables := chQuery(t, chHTTP, "SELECT name, engine FROM system.tables WHERE database = '"+db+"' ORDER BY name FORMAT TSV")
	columns := chQuery(t, chHTTP, "SELECT table, name, type FROM system.columns WHERE database = '"+db+"' FORMAT TSV")
	colsOf := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(columns), "\n") {
		f := strings.Split(line, "\t")
		if len(f) >= 2 {
			colsOf[f[0]] = append(colsOf[f[0]], f[1])
		}
	}
	dumped, skipped, colCount := 0, []string{}, 0
	var dumpedBytes int
	for _, line := range strings.Split(strings.TrimSpace(tables), "\n") {
		name, engine, _ := strings.Cut(line, "\t")
		if engine == "MaterializedView" || engine == "View" {
			skipped = append(skipped, name+" ("+engine+": its rows live in the table it writes to)")
			continue
		}
		cols := colsOf[name]
		idExpr := ""
		switch {
		case slices.Contains(cols, "kafka_partition") && slices.Contains(cols, "kafka_offset"):
			idExpr = `concat('\x1e', toString(kafka_partition), '/', toString(kafka_offset), '\x1e')`
		case slices.Contains(cols, "event_id"):
			idExpr = `concat('\x1e', event_id, '\x1e')`
		}
		dumped++
		for _, col := range cols {
			colCount++
			sel := "`" + col + "`"
			if idExpr != "" {
				sel = idExpr + ", " + sel
			}
			text := chQuery(t, chHTTP, "SELECT "+sel+" FROM "+db+".`"+name+"` FORMAT TSVRaw")
			dumpedBytes += len(text)
			marks := rowMarks(text)
			for _, h := range m.find(text) {
				cell := -1
				if id := markAt(marks, h.pos); id != "" {
					if strings.HasPrefix(id, "kafka:") { // event_id of a message without a producer id
						if i := strings.LastIndex(id, "/"); i > 0 {
							if j := strings.LastIndex(id[:i], "/"); j >= 0 {
								id = id[j+1:]
							}
						}
					}
					if cid, ok := offsets[id]; ok {
						id = cid
					}
					if ci, ok := cellByID[id]; ok {
						cell = ci
					}
				}
				hits = append(hits, hit{h.secret, cell, name + "." + col})
			}
		}
	}
	for _, h := range m.find(log.String()) {
		hits = append(hits, hit{h.secret, -1, "ingest log (stderr)"})
	}
	for _, h := range m.find(metrics) {
		hits = append(hits, hit{h.secret, -1, "/metrics"})
	}

	// 7. Report.
	type agg struct {
		cells   map[int]bool
		secrets map[int]bool
	}
	byWhere := map[string]*agg{}
	foundSecrets := map[int]bool{}
	leakCells := map[int][]string{}
	for _, h := range hits {
		a := byWhere[h.where]
		if a == nil {
			a = &agg{map[int]bool{}, map[int]bool{}}
			byWhere[h.where] = a
		}
		a.secrets[h.secret] = true
		foundSecrets[h.secret] = true
		if h.cell >= 0 {
			a.cells[h.cell] = true
			if !slices.Contains(leakCells[h.cell], h.where) {
				leakCells[h.cell] = append(leakCells[h.cell], h.where)
			}
		}
	}
	var r strings.Builder
	fmt.Fprintf(&r, "planted: %d secret types (%d credentials, %d customer values) at %d locations = %d messages, plus the redaction key\n",
		len(doc.Secrets), countClass(doc, "credential"), countClass(doc, "customer"), len(doc.Locations), len(doc.Cells))
	fmt.Fprintf(&r, "searched: %d tables (%d columns, %d bytes as TSVRaw), %d bytes of log, %d bytes of /metrics; skipped %v\n",
		dumped, colCount, dumpedBytes, len(log.String()), len(metrics), skipped)
	fmt.Fprintf(&r, "found: %d of %d secret types, in %d of %d messages, at %d places\n",
		len(foundSecrets), len(doc.Secrets), len(leakCells), len(doc.Cells), len(byWhere))
	wheres := make([]string, 0, len(byWhere))
	for w := range byWhere {
		wheres = append(wheres, w)
	}
	sort.Strings(wheres)
	for _, w := range wheres {
		a := byWhere[w]
		var names []string
		for si := range a.secrets {
			names = append(names, secretName(si))
		}
		sort.Strings(names)
		fmt.Fprintf(&r, "  %-40s %4d messages, %2d types: %s\n", w, len(a.cells), len(a.secrets), strings.Join(names, " "))
	}
	if len(leakCells) > 0 {
		byLoc := map[int][]string{}
		for ci, ws := range leakCells {
			c := doc.Cells[ci]
			sort.Strings(ws)
			byLoc[c.Location] = append(byLoc[c.Location], doc.Secrets[c.Secret].Type+"("+strings.Join(ws, ",")+")")
		}
		r.WriteString("by location (type(table.column)):\n")
		for li, l := range doc.Locations {
			if len(byLoc[li]) > 0 {
				sort.Strings(byLoc[li])
				fmt.Fprintf(&r, "  %s: %s\n", l.Name, strings.Join(byLoc[li], " "))
			}
		}
	}
	report := r.String()
	if p := os.Getenv("ERRTRAIL_LEAK_REPORT"); p != "" {
		if err := os.WriteFile(p, []byte(report), 0o644); err != nil {
			t.Error(err)
		}
	}
	if len(hits) > 0 {
		t.Errorf("planted values were stored, logged or exported:\n%s", report)
	} else {
		t.Logf("no planted value stored:\n%s", report)
	}
}

func countClass(doc leakDoc, class string) int {
	n := 0
	for _, s := range doc.Secrets {
		if s.Class == class {
			n++
		}
	}
	return n
}

func scrape(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("scrape %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s %v", u, resp.Status, err)
	}
	return string(b)
}

// chQuery runs a query over ClickHouse's HTTP interface.
func chQuery(t *testing.T, hostport, query string) string {
	t.Helper()
	resp, err := http.Post("http://"+hostport+"/", "text/plain", strings.NewReader(query))
	if err != nil {
		t.Fatalf("clickhouse %q: %v", query, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("clickhouse %q: %s: %s", query, resp.Status, b)
	}
	return string(b)
}

// readBackKeys reads the topic and maps "partition/offset" to the message
// key (the matrix cell id).
func readBackKeys(t *testing.T, s *stack) map[string]string {
	t.Helper()
	out := map[string]string{}
	conn, err := kafka.Dial("tcp", s.brokers[0])
	if err != nil {
		t.Fatal(err)
	}
	parts, err := conn.ReadPartitions(s.topic)
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		lc, err := kafka.DialLeader(ctx, "tcp", s.brokers[0], s.topic, p.ID)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		last, err := lc.ReadLastOffset()
		lc.Close()
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: s.brokers, Topic: s.topic, Partition: p.ID, MinBytes: 1, MaxBytes: 8 << 20})
		for n := int64(0); n < last; n++ {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				r.Close()
				cancel()
				t.Fatalf("reading back partition %d: %v", p.ID, err)
			}
			out[fmt.Sprintf("%d/%d", m.Partition, m.Offset)] = string(m.Key)
			if m.Offset >= last-1 {
				break
			}
		}
		r.Close()
		cancel()
	}
	return out
}

// rowMark is the identity of the row a dump position belongs to.
type rowMark struct {
	pos int
	id  string
}

// rowMarks finds the \x1e<id>\x1e markers that start the rows of a dump.
func rowMarks(text string) []rowMark {
	var marks []rowMark
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '\x1e')
		if j < 0 {
			break
		}
		start := i + j
		k := strings.IndexByte(text[start+1:], '\x1e')
		if k < 0 {
			break
		}
		marks = append(marks, rowMark{start, text[start+1 : start+1+k]})
		i = start + 1 + k + 1
	}
	return marks
}

func markAt(marks []rowMark, pos int) string {
	i := sort.Search(len(marks), func(i int) bool { return marks[i].pos > pos })
	if i == 0 {
		return ""
	}
	return marks[i-1].id
}

// matcher finds many needles (at least 6 bytes each) in one pass,
// case-insensitively: candidates by their first 6 bytes, then a compare.
type matcher struct {
	byPrefix map[string][]needle
}

type needle struct {
	lower  string
	secret int
}

type match struct {
	pos    int
	secret int
}

func (m *matcher) add(n string, secret int) {
	if len(n) < 6 {
		return
	}
	if m.byPrefix == nil {
		m.byPrefix = map[string][]needle{}
	}
	l := asciiLower(n)
	for _, x := range m.byPrefix[l[:6]] {
		if x.lower == l {
			return
		}
	}
	m.byPrefix[l[:6]] = append(m.byPrefix[l[:6]], needle{l, secret})
}

// find returns one match per (position, secret).
func (m *matcher) find(text string) []match {
	low := asciiLower(text)
	var out []match
	for i := 0; i+6 <= len(low); i++ {
		cands, ok := m.byPrefix[low[i:i+6]]
		if !ok {
			continue
		}
		for _, c := range cands {
			if strings.HasPrefix(low[i:], c.lower) {
				out = append(out, match{i, c.secret})
				break
			}
		}
	}
	return out
}

// asciiLower lowers A-Z only, so that byte positions stay those of the
// original text.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
