package emit

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Planted credentials: none may appear in any event.
var planted = []string{"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "sess=Zq81LmW0aa",
	"sk_live_4eC39HqLyjWDarjtT1zdp7dc", "hunter2", "tok-in-query", "lead-7781-secret", "setcookie-value"}

func TestMiddlewareErrorEventAndCredentials(t *testing.T) {
	sink := &capSink{}
	inner := rateLimiter(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	srv := httptest.NewServer(Handler(inner, sink, Config{Agent: "research-agent", Source: Source{ID: "agent-1"},
		Endpoint: "https://svc:hunter2@research.agents.example/a2a?token=tok-in-query", Caller: CallerFromHeader("X-Caller")}))
	defer srv.Close()
	c := newWire()
	body := `{"jsonrpc":"2.0","id":"req-41","method":"SendMessage","params":{"message":{"messageId":"m-41","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
	req, _ := http.NewRequest("POST", srv.URL+"/a2a", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", planted[0])
	req.Header.Set("Cookie", planted[1])
	req.Header.Set("X-Api-Key", planted[2])
	req.Header.Set("X-Caller", "orchestrator-7")
	req.Header.Set("X-Attempt", "2")
	req.Header.Set("X-Request-Id", "req_01HXY4K2VN")
	req.Header.Set("Idempotency-Key", "lead-7781-secret")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	evs := sink.all()
	if len(evs) != 1 {
		t.Fatalf("%d events; want 1", len(evs))
	}
	ev := evs[0]
	validEvent(t, ev)
	for _, p := range planted {
		if p == "lead-7781-secret" {
			if n := bytes.Count(ev, []byte(p)); n != 1 || !bytes.Contains(ev, []byte(`"idempotency_key":"lead-7781-secret"`)) {
				t.Errorf("idempotency key appears %d times, or not as its member:\n%s", n, ev)
			}
			continue
		}
		if bytes.Contains(ev, []byte(p)) {
			t.Errorf("planted %q in the event:\n%s", p, ev)
		}
	}
	got := parseEventContext(t, ev)
	if got.Method != "SendMessage" || string(got.Request.JSONRPCID) != `"req-41"` || got.Request.MessageID != "m-41" ||
		got.Caller != "orchestrator-7" || got.Attempt != 2 || got.Request.HTTPRequestID != "req_01HXY4K2VN" ||
		got.Source.Kind != KindAgent || got.Source.ID != "agent-1" || got.Endpoint != "https://research.agents.example/a2a" {
		t.Errorf("context %+v\n%s", got, ev)
	}
	rec := sameRecord(t, "rate-limit", ev, c.Last(), "")
	if rec.Kind != "quota" || rec.RetryAfterMS != 12000 {
		t.Errorf("record kind %s retry %d", rec.Kind, rec.RetryAfterMS)
	}
}

// TestMiddlewareLargeJSONStreams: a JSON 200 larger than the probe bound
// reaches the client while the handler is still writing it (nothing is
// held), and is not published.
func TestMiddlewareLargeJSONStreams(t *testing.T) {
	sink := &capSink{}
	got := make(chan struct{})
	srv := httptest.NewServer(Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"blob":"`+strings.Repeat("a", 40<<10))
		w.(http.Flusher).Flush()
		select {
		case <-got: // the client read the first part before we write the rest
		case <-time.After(5 * time.Second):
			t.Error("the client did not receive the first 40 KiB while the handler waited")
		}
		io.WriteString(w, strings.Repeat("b", 80<<10)+`"}}`)
	}), sink, Config{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 40<<10)); err != nil {
		t.Fatal(err)
	}
	close(got)
	rest, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.HasSuffix(rest, []byte(`"}}`)) {
		t.Fatal("body cut")
	}
	if n := len(sink.all()); n != 0 {
		t.Fatalf("%d events for a success", n)
	}
}

// TestMiddlewareSSENotHeldBack: the client reads the first event before the
// handler writes the second; the FAILED task at the end is published, and
// decodes like the whole stream received on the wire.
func TestMiddlewareSSENotHeldBack(t *testing.T) {
	sink := &capSink{}
	got := make(chan struct{})
	srv := httptest.NewServer(Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{\"task\":{\"id\":\"t-1\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Error("the first event was held back")
		}
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{\"statusUpdate\":{\"taskId\":\"t-1\",\"status\":{\"state\":\"TASK_STATE_FAILED\",\"message\":{\"parts\":[{\"text\":\"model backend returned HTTP 503\"}]}}}}}\n\n")
	}), sink, Config{Agent: "a"}))
	defer srv.Close()
	c := newWire()
	resp, err := c.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":"s1","method":"SendStreamingMessage","params":{"message":{"messageId":"m1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	line, _ := br.ReadString('\n')
	if !strings.Contains(line, "TASK_STATE_WORKING") {
		t.Fatalf("first line %q", line)
	}
	close(got)
	io.ReadAll(br)
	resp.Body.Close()
	evs := sink.all()
	if len(evs) != 1 {
		t.Fatalf("%d events", len(evs))
	}
	validEvent(t, evs[0])
	rec := sameRecord(t, "sse", evs[0], c.Last(), "")
	if rec.Code != "TASK_FAILED" || rec.Method != "SendStreamingMessage" || rec.MessageID != "m1" {
		t.Errorf("record %+v", rec)
	}
}

// TestMiddlewareKeepsInterfaces: Flusher, Hijacker, ReaderFrom and
// http.ResponseController (through Unwrap) work through the middleware.
func TestMiddlewareKeepsInterfaces(t *testing.T) {
	sink := &capSink{}
	var checks []string
	srv := httptest.NewServer(Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, f := w.(http.Flusher)
		_, h := w.(http.Hijacker)
		_, rf := w.(io.ReaderFrom)
		if !f || !h || !rf {
			checks = append(checks, "missing interface")
		}
		if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			checks = append(checks, "ResponseController: "+err.Error())
		}
		switch r.URL.Path {
		case "/hijack":
			conn, bw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				checks = append(checks, "hijack: "+err.Error())
				return
			}
			bw.WriteString("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno")
			bw.Flush()
			conn.Close()
		case "/readfrom":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.(io.ReaderFrom).ReadFrom(strings.NewReader("streamed"))
		case "/readfrom-error":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			w.(io.ReaderFrom).ReadFrom(strings.NewReader(`{"error":{"code":500,"status":"INTERNAL","message":"x"}}`))
		}
	}), sink, Config{}))
	defer srv.Close()
	for _, p := range []string{"/hijack", "/readfrom", "/readfrom-error"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if p == "/readfrom" && string(b) != "streamed" {
			t.Errorf("readfrom body %q", b)
		}
	}
	if len(checks) > 0 {
		t.Fatal(checks)
	}
	evs := sink.all()
	if len(evs) != 1 || !bytes.Contains(evs[0], []byte(`"http_status":500`)) || !bytes.Contains(evs[0], []byte(`"INTERNAL"`)) {
		t.Fatalf("events %s; want only the ReadFrom error (a hijacked connection is not inspected)", evs)
	}
}

// TestMiddlewareRequestBodyRestored: the handler reads the whole body it was
// sent, in small reads; the event has the ids from it.
func TestMiddlewareRequestBodyRestored(t *testing.T) {
	sink := &capSink{}
	body := `{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":"t-404","pad":"` + strings.Repeat("p", 100<<10) + `"}}`
	var seen string
	srv := httptest.NewServer(Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		buf := make([]byte, 7)
		for {
			n, err := r.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		seen = b.String()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":9,"error":{"code":-32001,"message":"Task not found"}}`)
	}), sink, Config{}))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen != body {
		t.Fatalf("handler read %d bytes; sent %d", len(seen), len(body))
	}
	evs := sink.all()
	if len(evs) != 1 {
		t.Fatalf("%d events", len(evs))
	}
	got := parseEventContext(t, evs[0])
	if got.Method != "GetTask" || string(got.Request.JSONRPCID) != "9" || got.Request.TaskID != "t-404" {
		t.Fatalf("context %+v", got)
	}
}

// TestMiddlewareSuccessUntouched: successful replies are byte-identical with
// and without the middleware, and publish nothing.
func TestMiddlewareSuccessUntouched(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`)
		case "/sniff":
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		default:
			io.WriteString(w, "<html>hello</html>")
		}
	})
	sink := &capSink{}
	plain, wrapped := httptest.NewServer(h), httptest.NewServer(Handler(h, sink, Config{}))
	defer plain.Close()
	defer wrapped.Close()
	c := newWire()
	for _, p := range []string{"/json", "/sniff", "/html"} {
		var got [2][]byte
		for i, u := range []string{plain.URL, wrapped.URL} {
			resp, err := c.Get(u + p)
			if err != nil {
				t.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
			got[i] = withoutDate(c.Last())
		}
		if !bytes.Equal(got[0], got[1]) {
			t.Errorf("%s: wrapped reply differs:\n%q\n%q", p, got[0], got[1])
		}
	}
	if n := len(sink.all()); n != 0 {
		t.Fatalf("%d events for successes", n)
	}
}
