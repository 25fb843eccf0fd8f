package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/emit"
	"github.com/errtrail/errtrail/emit/emitprom"
	"github.com/errtrail/errtrail/emit/kafkapub"
	"github.com/errtrail/errtrail/internal/stackload"
)

// quotaLimiter is a per-caller token bucket in front of an agent's JSON-RPC
// endpoint that rejects as seed 002 recommends: decided at admission
// (before the agent sees the call), HTTP 429, Retry-After in whole seconds
// computed from the bucket (never 0), and a JSON-RPC -32603 error whose
// data holds ErrorInfo RATE_LIMIT_EXCEEDED in the agent's own domain,
// RetryInfo and QuotaFailure.
type quotaLimiter struct {
	next     http.Handler
	burst    float64
	per      time.Duration // one token comes back every per
	mu       sync.Mutex
	buckets  map[string]*tokens
	rejected atomic.Int64
}

type tokens struct {
	n    float64
	last time.Time
}

func newQuotaLimiter(next http.Handler, burst int, per time.Duration) *quotaLimiter {
	return &quotaLimiter{next: next, burst: float64(burst), per: per, buckets: map[string]*tokens{}}
}

// take spends one of caller's tokens, or says how long until one is back.
func (l *quotaLimiter) take(caller string, now time.Time) (ok bool, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[caller]
	if b == nil {
		b = &tokens{n: l.burst, last: now}
		l.buckets[caller] = b
	}
	b.n = math.Min(l.burst, b.n+float64(now.Sub(b.last))/float64(l.per))
	b.last = now
	if b.n >= 1 {
		b.n--
		return true, 0
	}
	return false, time.Duration((1 - b.n) * float64(l.per))
}

func (l *quotaLimiter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	caller := r.Header.Get("X-Caller")
	ok, wait := l.take(caller, time.Now())
	if ok {
		l.next.ServeHTTP(w, r)
		return
	}
	l.rejected.Add(1)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req)
	if len(req.ID) == 0 {
		req.ID = json.RawMessage("null")
	}
	secs := int64(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	policy := fmt.Sprintf("%.0f %s calls per %v", l.burst, req.Method, l.per)
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": req.ID,
		"error": map[string]any{
			"code": -32603, "message": fmt.Sprintf("Caller %s exceeded %s", caller, policy),
			"data": []any{
				map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED",
					"domain": "research.agents.example", "metadata": map[string]string{"policy": "per-caller", "scope": "caller", "method": req.Method}},
				map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.FormatInt(secs, 10) + "s"},
				map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{
					map[string]any{"subject": "caller:" + caller, "description": policy}}},
			},
		},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	w.WriteHeader(http.StatusTooManyRequests)
	w.Write(body)
}

// limitedAgent starts a real a2a-go agent (JSON-RPC at /jsonrpc, the
// executor of tap_test.go) behind a limiter that admits burst calls per
// caller and then one a minute.
func limitedAgent(t *testing.T, burst int) (string, *quotaLimiter) {
	h := a2asrv.NewHandler(executor{}, a2asrv.WithCapabilityChecks(&a2a.AgentCapabilities{Streaming: true}))
	mux := http.NewServeMux()
	mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(h))
	l := newQuotaLimiter(mux, burst, time.Minute)
	s := httptest.NewServer(l)
	t.Cleanup(s.Close)
	return s.URL, l
}

// rewrite429 is the part of a gateway that turns an upstream 429 into a
// 502 with a generic page and no Retry-After: what seed 002 warns that
// gateways do ("Gateways sometimes strip bodies or rewrite 429 to 502").
type rewrite429 struct{ base http.RoundTripper }

func (rt rewrite429) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := rt.base.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		return resp, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	page := "<html><body><h1>502 Bad Gateway</h1></body></html>\n"
	h := http.Header{}
	h.Set("Content-Type", "text/html")
	h.Set("Content-Length", strconv.Itoa(len(page)))
	return &http.Response{Status: "502 Bad Gateway", StatusCode: http.StatusBadGateway, Proto: resp.Proto,
		ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor, Header: h,
		Body: io.NopCloser(strings.NewReader(page)), ContentLength: int64(len(page)), Request: r}, nil
}

// gateway is a reverse proxy to next whose upstream round trip goes through
// emit.Transport as source kind gateway. emit.Transport is outermost, so it
// reports the reply the gateway hands its client: with mangle, the 502 its
// rewriting layer made of the agent's 429.
func gateway(t *testing.T, next string, sink emit.Sink, agent string, mangle bool) string {
	u, err := url.Parse(next)
	if err != nil {
		t.Fatal(err)
	}
	var rt http.RoundTripper = http.DefaultTransport.(*http.Transport).Clone()
	if mangle {
		rt = rewrite429{rt}
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.Out.Host = pr.In.Host },
		Transport: emit.Transport(rt, sink, emit.Config{Agent: agent, Endpoint: next + "/jsonrpc",
			Source: emit.Source{Kind: emit.KindGateway, ID: "gw-eu-1"}, Caller: emit.CallerFromHeader("X-Caller")}),
	}
	s := httptest.NewServer(proxy)
	t.Cleanup(s.Close)
	return s.URL
}

// startTapFor runs the command's serve as the given agent's tap.
func startTapFor(t *testing.T, upstream, topic, brokers, agent string) (string, string) {
	t.Helper()
	return serveTap(t, "--upstream", upstream, "--http.listen-address", "127.0.0.1:0",
		"--metrics.listen-address", "127.0.0.1:0", "--kafka.brokers", brokers, "--kafka.topic", topic,
		"--agent", agent, "--source.id", "tap-"+agent, "--caller.header", "X-Caller")
}

// metricSums sums the samples of the named families on a /metrics page.
func metricSums(t *testing.T, admin string, names ...string) map[string]float64 {
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		for _, n := range names {
			if rest, ok := strings.CutPrefix(line, n); ok && rest != "" && (rest[0] == ' ' || rest[0] == '{') {
				f := strings.Fields(line)
				v, _ := strconv.ParseFloat(f[len(f)-1], 64)
				out[n] += v
			}
		}
	}
	return out
}

// tapSent waits until the tap has handed want error replies to its
// publisher and Kafka has acknowledged or refused each, and returns the
// number sent and dropped.
func tapSent(t *testing.T, admin string, want int64) (sent, dropped int64) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		m := metricSums(t, admin, "errtrail_tap_error_replies_total", "errtrail_emit_queued_total",
			"errtrail_emit_sent_total", "errtrail_emit_dropped_total")
		q, s, d := int64(m["errtrail_emit_queued_total"]), int64(m["errtrail_emit_sent_total"]), int64(m["errtrail_emit_dropped_total"])
		if int64(m["errtrail_tap_error_replies_total"]) >= want && s+d >= q {
			return s, d
		}
		if time.Now().After(deadline) {
			t.Fatalf("tap at %s: %v after 20s, want %d error replies all sent", admin, m, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// counter reads a counter of the test's own publisher.
func counter(c prometheus.Metric) int64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return int64(m.GetCounter().GetValue())
}

// dropped sums errtrail_emit_dropped_total over its reasons.
func dropped(m *emitprom.Metrics) int64 {
	ch := make(chan prometheus.Metric, 16)
	go func() { m.Dropped.Collect(ch); close(ch) }()
	var n int64
	for c := range ch {
		n += counter(c)
	}
	return n
}

// chain is client → gateway → tap → limited agent, for one agent name.
type chain struct {
	agent    string
	mangle   bool
	limiter  *quotaLimiter
	front    string // the gateway's URL, what the client calls
	tapAdmin string
	got      map[int]int // replies the client got, by status
}

// drive sends n SendMessage calls from one caller through the gateway,
// each with its own request id and messageId.
func (c *chain) drive(n int) error {
	c.got = map[int]int{}
	for i := 0; i < n; i++ {
		body := jrpc(fmt.Sprintf("req-%d", i), "SendMessage", msg(fmt.Sprintf("m-%s-%d", c.agent, i), "hello"))
		req, _ := http.NewRequest("POST", c.front+"/jsonrpc", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Caller", "orchestrator-7")
		req.Header.Set("X-Request-Id", fmt.Sprintf("%s-%03d", c.agent, i))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("%s call %d: %w", c.agent, i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		c.got[resp.StatusCode]++
	}
	return nil
}

// TestGatewayManglingOnTheStack runs the chain issue 14 §3 asks for, twice
// at once, on the stack's Kafka and ClickHouse: a client calls a gateway
// (emit.Transport, source kind gateway), which calls the tap (source kind
// agent), which calls a real a2a-go agent whose limiter answers as seed 002
// says (429, Retry-After, ErrorInfo RATE_LIMIT_EXCEEDED). In one chain the
// gateway rewrites 429 into a 502 with a generic page; in the other it
// passes the reply on. Every event goes to a fresh topic, ingest.Pipeline
// stores it in a fresh database, and the alerter, evaluated at now with
// its default thresholds, must find gateway mangling for the first agent,
// with the 429→502 rewrite, and not for the second, whose requests it
// pairs just as well. No event is lost on the way: the rows stored are
// the events the emitters report as sent.
func TestGatewayManglingOnTheStack(t *testing.T) {
	brokers, topic := kafkaTopic(t)
	gwMetrics := emitprom.NewMetrics(prometheus.NewRegistry())
	gwPub, err := kafkapub.New(kafkapub.Config{Brokers: brokers, Topic: topic, Metrics: gwMetrics})
	if err != nil {
		t.Fatal(err)
	}
	gwClosed := false
	t.Cleanup(func() {
		if !gwClosed {
			gwPub.Close(context.Background())
		}
	})

	const calls, burst = 24, 3
	cfg := alerter.DefaultConfig()
	if rejected := int64(calls - burst); rejected < cfg.Gateway.MinMangled || float64(rejected)/calls < cfg.Gateway.MinShare {
		t.Fatalf("%d rejections of %d calls do not reach the gateway thresholds %+v", rejected, calls, cfg.Gateway)
	}
	id := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	chains := []*chain{{agent: "research-agent-mangled-" + id, mangle: true}, {agent: "research-agent-clean-" + id}}
	for _, c := range chains {
		agentURL, l := limitedAgent(t, burst)
		c.limiter = l
		tapAddr, admin := startTapFor(t, agentURL, topic, strings.Join(brokers, ","), c.agent)
		c.tapAdmin = admin
		c.front = gateway(t, "http://"+tapAddr, gwPub, c.agent, c.mangle)
	}
	errs := make([]error, len(chains))
	var wg sync.WaitGroup
	for i, c := range chains {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.drive(calls) }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	var sent int64
	for _, c := range chains {
		rej := c.limiter.rejected.Load()
		want := map[int]int{http.StatusOK: burst, http.StatusTooManyRequests: calls - burst}
		if c.mangle {
			want = map[int]int{http.StatusOK: burst, http.StatusBadGateway: calls - burst}
		}
		if rej != calls-burst || !reflect.DeepEqual(c.got, want) {
			t.Fatalf("%s: limiter rejected %d, client got %v; want %d rejected, %v", c.agent, rej, c.got, calls-burst, want)
		}
		s, d := tapSent(t, c.tapAdmin, rej)
		if s != rej || d != 0 {
			t.Errorf("%s: tap sent %d and dropped %d events; want %d sent, none dropped", c.agent, s, d, rej)
		}
		sent += s
	}
	// A guard against a hang only: on a loaded machine the closes, the
	// read-back and the alerter's reads took more than 20 s together.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := gwPub.Close(ctx); err != nil {
		t.Errorf("gateway publisher close: %v", err)
	}
	gwClosed = true
	gs, gd := counter(gwMetrics.Sent), dropped(gwMetrics)
	if gs != 2*(calls-burst) || gd != 0 {
		t.Errorf("gateway sent %d and dropped %d events; want %d sent, none dropped", gs, gd, 2*(calls-burst))
	}
	sent += gs
	lastEvent := time.Now()

	st := stackload.Topic(t, topic, sent)
	var stored, dead uint64
	if err := st.Conn.QueryRow(ctx, "SELECT (SELECT count() FROM "+st.Database+".errors), (SELECT count() FROM "+st.Database+".dead_letter)").Scan(&stored, &dead); err != nil {
		t.Fatal(err)
	}
	if int64(stored+dead) != sent || dead != 0 {
		t.Errorf("stored %d rows and %d dead letters; the emitters sent %d events", stored, dead, sent)
	}
	checkRows(t, st, chains, calls-burst)

	now := time.Now()
	if now.Unix() <= lastEvent.Unix() { // the span ends at now's whole second
		time.Sleep(time.Until(lastEvent.Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
		now = time.Now()
	}
	in, err := (&alerter.Reader{Conn: st.Conn, Database: st.Database}).Gather(ctx, &cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	v := alerter.Evaluate(&cfg, in, nil)
	n := int64(calls - burst)
	for _, c := range chains {
		var gv *alerter.GatewayVerdict
		for _, a := range v.Agents {
			if a.Agent == c.agent {
				gv = a.Gateway
			}
		}
		if gv == nil {
			t.Errorf("%s: no gateway verdict (no request paired)", c.agent)
			continue
		}
		t.Logf("%s: %+v", c.agent, *gv)
		if gv.Pairs != n {
			t.Errorf("%s: %d pairs; want %d (each rejection seen by the tap and the gateway)", c.agent, gv.Pairs, n)
		}
		if c.mangle {
			want := []alerter.Rewrite{{AgentStatus: 429, GatewayStatus: 502, N: n}}
			if !gv.Mangling || gv.Mangled != n || gv.StatusDiffers != n || !reflect.DeepEqual(gv.Rewrites, want) {
				t.Errorf("%s: mangling %v, mangled %d, status differs %d, rewrites %+v; want mangling, %d each, rewrites %+v",
					c.agent, gv.Mangling, gv.Mangled, gv.StatusDiffers, gv.Rewrites, n, want)
			}
		} else if gv.Mangling || gv.Mangled != 0 || gv.BodyStripped != 0 || len(gv.Rewrites) != 0 {
			t.Errorf("%s: the gateway passed every reply on, yet mangling %v, mangled %d, body stripped %d, rewrites %+v",
				c.agent, gv.Mangling, gv.Mangled, gv.BodyStripped, gv.Rewrites)
		}
	}
}

// checkRows reads back, per agent, what each side stored: the tap's 429s
// typed as RATE_LIMIT_EXCEEDED, the gateway's 502s untyped (or, passed
// on, the same 429s).
func checkRows(t *testing.T, st *stackload.Data, chains []*chain, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard
	defer cancel()
	for _, c := range chains {
		rows, err := st.Conn.Query(ctx, "SELECT source_kind, toUInt16(http_status), reason, toUInt8(typed), count() FROM "+st.Database+
			".errors WHERE agent = ? GROUP BY source_kind, http_status, reason, typed ORDER BY source_kind", c.agent)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		for rows.Next() {
			var kind, reason string
			var status uint16
			var typed uint8
			var cnt uint64
			if err := rows.Scan(&kind, &status, &reason, &typed, &cnt); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&got, "%s %d %s typed=%d x%d\n", kind, status, reason, typed, cnt)
		}
		rows.Close()
		want := fmt.Sprintf("agent 429 RATE_LIMIT_EXCEEDED typed=1 x%d\ngateway 429 RATE_LIMIT_EXCEEDED typed=1 x%[1]d\n", n)
		if c.mangle {
			want = fmt.Sprintf("agent 429 RATE_LIMIT_EXCEEDED typed=1 x%d\ngateway 502  typed=0 x%[1]d\n", n)
		}
		if got.String() != want {
			t.Errorf("%s: stored rows\n%s want\n%s", c.agent, got.String(), want)
		}
	}
}
