package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/parse"
)

// The tap against hostile or careless peers (issue 23): an agent whose
// reply headers hold credentials or whose error body is endless or cut, and
// clients that send broken bodies, stall, go away, or name another host.
// Every test runs the command's serve in front of a real upstream server
// and, where events are involved, reads them back from the stack's Kafka.

// runTap runs serve with args and returns the proxy's and admin's
// addresses and a stop function, which returns once serve has stopped and
// its publisher flushed every queued event to Kafka.
func runTap(t *testing.T, args ...string) (proxy, admin string, stop func()) {
	t.Helper()
	o, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan [2]string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, o, slog.New(slog.NewTextHandler(io.Discard, nil)), func(p, a string) { addrs <- [2]string{p, a} })
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
	t.Cleanup(stop)
	select {
	case a := <-addrs:
		return a[0], a[1], stop
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return "", "", stop
}

func tapArgs(upstream string, brokers []string, topic string, extra ...string) []string {
	return append([]string{"--upstream", upstream, "--http.listen-address", "127.0.0.1:0", "--metrics.listen-address", "127.0.0.1:0",
		"--kafka.brokers", strings.Join(brokers, ","), "--kafka.topic", topic, "--agent", "research-agent",
		"--source.id", "tap-1", "--caller.header", "X-Caller", "--log.level", "error"}, extra...)
}

// allEvents returns every message of the topic's partition (after the
// taps publishing to it have stopped and flushed).
func allEvents(t *testing.T, brokers []string, topic string) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := kafka.DialLeader(ctx, "tcp", brokers[0], topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	last, err := conn.ReadLastOffset()
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	if last == 0 {
		return nil
	}
	return readEvents(t, brokers, topic, int(last))
}

// waitMetric polls the admin's /metrics until it holds line (a failure
// guard of a minute, not a latency bound).
func waitMetric(t *testing.T, admin, line string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		m := scrape(t, admin)
		if strings.Contains(m, line) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in /metrics:\n%s", line, m)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// eventOf is what the tests read of an event.
type eventOf struct {
	Source   struct{ Kind string }
	Endpoint string
	Caller   string
	Request  struct {
		HTTPRequestID string `json:"http_request_id"`
	}
	Reply struct {
		HTTPStatus     int             `json:"http_status"`
		Headers        [][2]string     `json:"headers"`
		Body           string          `json:"body"`
		BodyJSON       json.RawMessage `json:"body_json"`
		BodyIncomplete string          `json:"body_incomplete"`
	}
}

func readEvent(t *testing.T, b []byte) eventOf {
	t.Helper()
	var e eventOf
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return e
}

// replyPlanted are response headers an agent, or an identity-aware proxy
// in front of it, may send that a deny-list misses; none of their values
// may reach Kafka. The last ones are names no list could know.
var replyPlanted = [][2]string{
	{"X-Vendor-Api-Secret", "planted-vendor-4q7"},
	{"Openai-Organization", "planted-org-5x"},
	{"X-Goog-Iap-Jwt-Assertion", "eyJplanted.iap.assertion"},
	{"Cf-Access-Jwt-Assertion", "eyJplanted.cf.assertion"},
	{"X-Amzn-Oidc-Data", "eyJplanted.alb.oidc"},
	{"X-Key", "planted-xkey-88"},
	{"X-Auth", "planted-xauth-91"},
	{"X-Session", "planted-xsession-19"},
	{"X-" + strings.Repeat("Long-", 14) + "Token", "planted-longtoken-55"},
	{"Location", "https://user:planted-pass-12@agent.example/cb?access_token=planted-at-33&code=planted-code-44"},
	{"Link", "<https://agent.example/next?access_token=planted-link-66>; rel=next"},
	{"Refresh", "0; url=https://agent.example/?code=planted-refresh-77"},
	{"WWW-Authenticate", `Bearer error="invalid_token", error_description="planted-desc-99"`},
	{"Mcp-Session-Id", "planted-session-10"},
	{"X-Never-Seen-Before", "planted-unseen-21"},
	{"Zz-Tenant-Passphrase", "planted-unseen-22"},
}

// TestTapKeepsOnlyAllowedHeaders (issue 23, defect 6): an agent answers a
// JSON-RPC rate-limit error over HTTP and a Trailers-Only gRPC error over
// h2c, both with the planted headers. The client gets every header; the
// events read back from Kafka hold none of the planted values (nor the
// names off the allow-list), and the kept headers still drive the record:
// retry after, the limit's name, the protocol from Mcp-Session-Id's
// presence; the gRPC status from the kept trailers.
func TestTapKeepsOnlyAllowedHeaders(t *testing.T) {
	brokers, topic := kafkaTopic(t)
	plant := func(h http.Header) {
		for _, p := range replyPlanted {
			h[p[0]] = []string{p[1]}
		}
	}
	agent := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		plant(w.Header())
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			w.Header().Set("Content-Type", "application/grpc")
			w.Header().Set("Grpc-Status", "8")
			w.Header().Set("Grpc-Message", "quota exceeded")
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "12")
		w.Header().Set("X-RateLimit-Resource", "search")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"jsonrpc":"2.0","id":"r1","error":{"code":-32029,"message":"rate limited"}}`)
	})
	up := httptest.NewUnstartedServer(agent)
	up.Config.Protocols = new(http.Protocols)
	up.Config.Protocols.SetHTTP1(true)
	up.Config.Protocols.SetUnencryptedHTTP2(true)
	up.Start()
	defer up.Close()
	proxy, _, stop := runTap(t, tapArgs(up.URL, brokers, topic)...)

	req, _ := http.NewRequest("POST", "http://"+proxy+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "allow-http")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.Header.Get("X-Key") != "planted-xkey-88" || resp.Header.Get("Location") == "" {
		t.Errorf("the client did not get the agent's headers: %v", resp.Header)
	}
	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	defer h2c.CloseIdleConnections()
	greq, _ := http.NewRequest("POST", "http://"+proxy+"/a2a.v1.A2AService/GetTask", strings.NewReader("\x00\x00\x00\x00\x00"))
	greq.Header.Set("Content-Type", "application/grpc")
	greq.Header.Set("Te", "trailers")
	greq.Header.Set("X-Request-Id", "allow-grpc")
	gresp, err := h2c.RoundTrip(greq)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, gresp.Body)
	gresp.Body.Close()
	if gresp.Header.Get("Grpc-Status") != "8" || gresp.Header.Get("X-Auth") != "planted-xauth-91" {
		t.Errorf("gRPC reply headers %v", gresp.Header)
	}
	stop()

	evs := allEvents(t, brokers, topic)
	if len(evs) != 2 {
		t.Fatalf("%d events; want 2", len(evs))
	}
	for _, ev := range evs {
		if strings.Contains(string(ev), "planted") {
			t.Errorf("a planted header value reached Kafka:\n%s", ev)
		}
		low := strings.ToLower(string(ev))
		for _, p := range replyPlanted {
			if p[0] != "Mcp-Session-Id" && strings.Contains(low, `"`+strings.ToLower(p[0])+`"`) {
				t.Errorf("header %s, off the allow-list, reached Kafka:\n%s", p[0], ev)
			}
		}
		rec := decode(t, ev, nil)
		switch rec.HTTPRequestID {
		case "allow-http":
			if rec.RetryAfterMS != 12000 || rec.Limit != "search" || rec.Protocol != parse.ProtocolMCP || rec.HTTPStatus != 429 {
				t.Errorf("HTTP: retry after %d, limit %q, protocol %v, status %d: the kept headers do not drive the record\n%s",
					rec.RetryAfterMS, rec.Limit, rec.Protocol, rec.HTTPStatus, ev)
			}
		case "allow-grpc":
			if rec.GRPCCode != 8 || rec.Binding != parse.BindingGRPC {
				t.Errorf("gRPC: code %d binding %v\n%s", rec.GRPCCode, rec.Binding, ev)
			}
		default:
			t.Errorf("unexpected event %s", ev)
		}
	}
}

// TestTapIncompleteErrorBodies (issue 23, defect 7): an error body over the
// 512 KiB capture bound, an endless 500 stream and a body the agent cuts
// off mid-way each reach the client as the agent sent it and each end as
// an event on Kafka, without its body and with reply.body_incomplete
// (too_large, too_large, cut), counted on /metrics; each event decodes to a
// record of the agent's status (no dead letter).
func TestTapIncompleteErrorBodies(t *testing.T) {
	brokers, topic := kafkaTopic(t)
	big := strings.Repeat("x", 600<<10)
	agent := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/big":
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":{"message":"`+big+`"}}`)
		case "/endless":
			w.WriteHeader(http.StatusInternalServerError)
			chunk := []byte(strings.Repeat("y", 16<<10))
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/cut":
			w.Header().Set("Content-Length", "4096")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"overloaded`)
			w.(http.Flusher).Flush()
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
		}
	})
	up := httptest.NewServer(agent)
	defer up.Close()
	proxy, admin, stop := runTap(t, tapArgs(up.URL, brokers, topic)...)

	call := func(path string, read int64) (int, int64, error) {
		req, _ := http.NewRequest("GET", "http://"+proxy+path, nil)
		req.Header.Set("X-Request-Id", "incomplete"+strings.ReplaceAll(path, "/", "-"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, 0, err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, read))
		return resp.StatusCode, n, err
	}
	if code, n, err := call("/big", 1<<30); code != 500 || n != int64(len(big)+len(`{"error":{"message":""}}`)) || err != nil {
		t.Errorf("/big: status %d, %d bytes, %v", code, n, err)
	}
	if code, n, err := call("/endless", 2<<20); code != 500 || n != 2<<20 || err != nil {
		t.Errorf("/endless: status %d, %d bytes, %v", code, n, err)
	}
	// The agent's reply breaks off: the client sees it break (the status
	// with a short body, or the connection closed before the proxy's
	// buffer went out), never a whole reply.
	if code, _, err := call("/cut", 1<<30); err == nil || code != 503 && code != 0 {
		t.Errorf("/cut: status %d, err %v; want the reply broken off", code, err)
	}
	waitMetric(t, admin, `errtrail_tap_incomplete_replies_total{reason="too_large"} 2`)
	waitMetric(t, admin, `errtrail_tap_incomplete_replies_total{reason="cut"} 1`)
	stop()

	want := map[string]struct {
		status int
		reason string
	}{"incomplete-big": {500, "too_large"}, "incomplete-endless": {500, "too_large"}, "incomplete-cut": {503, "cut"}}
	evs := allEvents(t, brokers, topic)
	if len(evs) != len(want) {
		t.Errorf("%d events; want %d", len(evs), len(want))
	}
	for _, ev := range evs {
		e := readEvent(t, ev)
		w, ok := want[e.Request.HTTPRequestID]
		if !ok {
			t.Errorf("unexpected event %.300s", ev)
			continue
		}
		delete(want, e.Request.HTTPRequestID)
		if e.Reply.HTTPStatus != w.status || e.Reply.BodyIncomplete != w.reason || e.Reply.Body != "" || len(e.Reply.BodyJSON) != 0 {
			t.Errorf("%s: status %d, body_incomplete %q, body %d+%d bytes; want %d, %q, none", e.Request.HTTPRequestID,
				e.Reply.HTTPStatus, e.Reply.BodyIncomplete, len(e.Reply.Body), len(e.Reply.BodyJSON), w.status, w.reason)
		}
		if rec := decode(t, ev, nil); rec.HTTPStatus != w.status || rec.Kind == parse.KindUnknown {
			t.Errorf("%s: record status %d kind %s", e.Request.HTTPRequestID, rec.HTTPStatus, rec.Kind)
		}
	}
	for id := range want {
		t.Errorf("no event for %s", id)
	}
}

// rawRequest writes b on a new connection to addr and returns the
// connection and a reader of the reply.
func rawRequest(t *testing.T, addr, b string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, b); err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

// readStatus reads the status of the reply on br, or -1 when the
// connection closed without one. A read deadline of a minute guards
// against a hang (a failure, not a latency bound).
func readStatus(t *testing.T, c net.Conn, br *bufio.Reader) int {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("no reply and the connection stays open")
		}
		return -1
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestTapOwnFailuresAreNotTheAgents (issue 23, defect 8): a malformed
// chunked request body, a client that sends part of its body and goes
// away, a client whose body stalls past --http.body-read-timeout and an
// upstream that cannot be reached: none is the agent's reply, so none is
// published (the topic stays empty once the taps have flushed); the
// client's failures are counted by reason (bad body answered 400, stalled
// body 408) and the unreachable upstream is answered 502 and counted. The
// agent behind the tap answers every request it gets with a 500, so a
// request that reached it would be published.
func TestTapOwnFailuresAreNotTheAgents(t *testing.T) {
	brokers, topic := kafkaTopic(t)
	reached := make(chan string, 8)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.Copy(io.Discard, r.Body)
		reached <- fmt.Sprintf("%s %v", r.URL.Path, err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"agent failure"}}`)
	}))
	defer up.Close()
	proxy, admin, stop := runTap(t, tapArgs(up.URL, brokers, topic, "--http.body-read-timeout", "300ms")...)
	down, downAdmin, stopDown := runTap(t, tapArgs("http://"+closedPort(t), brokers, topic)...)

	c, br := rawRequest(t, proxy, "POST /jsonrpc HTTP/1.1\r\nHost: agent\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")
	if code := readStatus(t, c, br); code != http.StatusBadRequest {
		t.Errorf("malformed chunked body: status %d; want 400", code)
	}
	waitMetric(t, admin, `errtrail_tap_client_failures_total{reason="bad_body"} 1`)
	c.Close()

	c, _ = rawRequest(t, proxy, "POST /jsonrpc HTTP/1.1\r\nHost: agent\r\nContent-Length: 100\r\nContent-Type: application/json\r\n\r\n{\"jsonrpc\":")
	waitMetric(t, admin, `errtrail_tap_requests_total{protocol="http"} 2`)
	c.Close() // gone before the body is whole
	waitMetric(t, admin, `errtrail_tap_client_failures_total{reason="gone"} 1`)

	c, br = rawRequest(t, proxy, "POST /jsonrpc HTTP/1.1\r\nHost: agent\r\nContent-Length: 100\r\nContent-Type: application/json\r\n\r\n{\"jsonrpc\":")
	if code := readStatus(t, c, br); code != http.StatusRequestTimeout && code != -1 {
		t.Errorf("stalled body: status %d; want 408 or a closed connection", code)
	}
	waitMetric(t, admin, `errtrail_tap_client_failures_total{reason="timeout"} 1`)
	c.Close()

	resp, err := http.Post("http://"+down+"/jsonrpc", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("unreachable upstream: status %d; want 502", resp.StatusCode)
	}
	waitMetric(t, downAdmin, `errtrail_tap_upstream_failures_total 1`)
	stop()
	stopDown()

	for _, ev := range allEvents(t, brokers, topic) {
		t.Errorf("published in the agent's name: %s", ev)
	}
	close(reached)
	for r := range reached {
		t.Logf("the agent saw %s", r)
	}
}

// TestTapRecordsTheUpstreamAndForwardedHeaders (issue 23, defect 9): a
// client that sends an absolute URI naming another host, and one that
// lists X-Caller and X-Request-Id in Connection: the events name the
// configured upstream as endpoint, never the client's host, and record
// neither header, which the agent did not see either.
func TestTapRecordsTheUpstreamAndForwardedHeaders(t *testing.T) {
	brokers, topic := kafkaTopic(t)
	seen := make(chan http.Header, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		seen <- r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"agent failure"}}`)
	}))
	defer up.Close()
	proxy, _, stop := runTap(t, tapArgs(up.URL+"/base/", brokers, topic)...)

	c, br := rawRequest(t, proxy, "GET http://attacker.example:9999/a2a HTTP/1.1\r\nHost: attacker.example:9999\r\nX-Request-Id: absolute-uri\r\nX-Caller: orchestrator-7\r\n\r\n")
	if code := readStatus(t, c, br); code != 500 {
		t.Errorf("absolute URI: status %d", code)
	}
	c, br = rawRequest(t, proxy, "GET /a2a HTTP/1.1\r\nHost: attacker.example\r\nConnection: X-Caller, X-Request-Id\r\nX-Caller: forged-caller\r\nX-Request-Id: forged-request-id\r\n\r\n")
	if code := readStatus(t, c, br); code != 500 {
		t.Errorf("Connection-listed headers: status %d", code)
	}
	for i := 0; i < 2; i++ {
		h := <-seen
		if h.Get("X-Caller") == "forged-caller" || h.Get("X-Request-Id") == "forged-request-id" {
			t.Errorf("the agent saw a Connection-listed header: %v", h)
		}
	}
	stop()
	evs := allEvents(t, brokers, topic)
	if len(evs) != 2 {
		t.Fatalf("%d events; want 2", len(evs))
	}
	want := "http://" + strings.TrimPrefix(up.URL, "http://") + "/base/a2a"
	for _, ev := range evs {
		e := readEvent(t, ev)
		if e.Endpoint != want || strings.Contains(string(ev), "attacker") {
			t.Errorf("endpoint %q; want the upstream's %q\n%s", e.Endpoint, want, ev)
		}
		if strings.Contains(string(ev), "forged") {
			t.Errorf("a Connection-listed header was recorded:\n%s", ev)
		}
		if e.Request.HTTPRequestID == "absolute-uri" && e.Caller != "orchestrator-7" {
			t.Errorf("absolute URI: caller %q; the ordinary headers are still recorded", e.Caller)
		}
	}
}

// TestTapClosesIdleConnections (issue 23, defect 9): with
// --http.idle-timeout set small, a keep-alive connection left idle after
// its reply is closed by the tap (the client reads the end of the
// connection, not its own guard deadline).
func TestTapClosesIdleConnections(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer up.Close()
	proxy, _, _ := runTap(t, tapArgs(up.URL, []string{closedPort(t)}, "unused", "--http.idle-timeout", "200ms")...)
	c, br := rawRequest(t, proxy, "GET /ok HTTP/1.1\r\nHost: agent\r\n\r\n")
	if code := readStatus(t, c, br); code != 200 {
		t.Fatalf("status %d", code)
	}
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a guard: the outcome asserted is the close
	_, err := br.ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the idle connection was not closed")
	}
	if !errors.Is(err, io.EOF) {
		t.Errorf("read on the idle connection: %v; want EOF (closed by the tap)", err)
	}
}
