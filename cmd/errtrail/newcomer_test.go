package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/errtrail/errtrail/emit"
	"github.com/errtrail/errtrail/emit/kafkapub"
	"github.com/errtrail/errtrail/internal/stackload"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/errtrail/errtrail/lookup"
)

// plantedToken is the credential the newcomer's client sends: it must reach
// no answer, row or page.
const plantedToken = "Bearer nc-Zq81LwTt6pX3vR0mKs9"

// newcomerAgent is a small A2A HTTP+JSON agent of one's own: every
// SendMessage is over its per-caller quota, answered as seed 002's 429
// with a Retry-After and an error_id of its own in the ErrorInfo metadata,
// a new one per reply.
func newcomerAgent() http.Handler {
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/message:send", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		id := fmt.Sprintf("err_nc_%d_%d", time.Now().UnixNano()%1e9, n.Add(1))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "12")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Caller %s exceeded 60 SendMessage calls per minute","details":[`+
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"agents.example.com","metadata":{"scope":"caller","error_id":%q}},`+
			`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}`, r.Header.Get("X-Caller"), id)
	})
	return mux
}

// TestNewcomerPath is the goal of issue 24: the path a newcomer takes,
// end to end on the real stack. An agent of one's own wrapped with
// emit.Handler as docs/emit.md shows (caller from X-Caller), a client
// whose http.Client uses emit.Transport, both publishing to a fresh Kafka
// topic; ingest.Pipeline stores the topic in a fresh ClickHouse database;
// then `errtrail lookup` (the command's own code path, flags after the id
// as a newcomer types them) and `errtrail serve`'s API and page.
//
//   - One reply, seen by the agent and by the client: its error_id gives
//     one story (exit 0), told from the agent's copy, naming both
//     observers and saying they saw the same reply; the API and the page
//     tell the same story with the same observers.
//   - A retried message (two replies, each seen by both): its message_id
//     gives several matches (exit 3), four rows listing each one's
//     observer and the reply it belongs to.
//   - The planted Authorization value appears in no answer.
func TestNewcomerPath(t *testing.T) {
	brokers, topic := stackload.NewTopic(t, "errtrail.newcomer.")
	ctx := context.Background()

	// The agent and the client, each with its own publisher, as two
	// processes would have.
	agentPub, err := kafkapub.New(kafkapub.Config{Brokers: brokers, Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	clientPub, err := kafkapub.New(kafkapub.Config{Brokers: brokers, Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(emit.Handler(newcomerAgent(), agentPub, emit.Config{
		Agent: "newcomer-agent", Caller: emit.CallerFromHeader("X-Caller"), Source: emit.Source{ID: "agent-host"}}))
	defer srv.Close()
	client := &http.Client{Transport: emit.Transport(nil, clientPub, emit.Config{Source: emit.Source{ID: "client-laptop"}})}

	send := func(msgID, reqID string, attempt int) {
		t.Helper()
		body := `{"message":{"messageId":"` + msgID + `","role":"ROLE_USER","parts":[{"text":"find leads"}]}}`
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/message:send", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", plantedToken)
		req.Header.Set("X-Caller", "acme-orchestrator")
		req.Header.Set("X-Request-Id", reqID)
		req.Header.Set("X-Attempt", strconv.Itoa(attempt))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("the agent answered %d", resp.StatusCode)
		}
	}
	tag := fmt.Sprintf("%d", time.Now().UnixNano()%1e9)
	send("msg-once-"+tag, "req-once-"+tag, 1)
	send("msg-retried-"+tag, "req-retried-"+tag, 1)
	send("msg-retried-"+tag, "req-retried-"+tag, 2)

	closeCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := agentPub.Close(closeCtx); err != nil {
		t.Fatalf("agent publisher: %v", err)
	}
	if err := clientPub.Close(closeCtx); err != nil {
		t.Fatalf("client publisher: %v", err)
	}
	data := stackload.Topic(t, topic, 6) // 3 replies, each published by the agent and by the client

	var errorID string
	if err := data.Conn.QueryRow(ctx, "SELECT any(error_id) FROM "+data.Database+".errors WHERE message_id = ?", "msg-once-"+tag).Scan(&errorID); err != nil || errorID == "" {
		t.Fatalf("the reply's error_id: %q, %v", errorID, err)
	}
	var dead uint64
	if err := data.Conn.QueryRow(ctx, "SELECT count() FROM "+data.Database+".dead_letter").Scan(&dead); err != nil || dead != 0 {
		t.Fatalf("%d events dead-lettered (%v); want every one stored", dead, err)
	}
	conn := []string{"--clickhouse.addr", data.Addr, "--clickhouse.database", data.Database}
	cli := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(ctx, args, &out, &errb)
		return code, out.String(), errb.String()
	}

	// One reply, two observers: one story, exit 0, flags after the id.
	code, out, errs := cli(append([]string{"lookup", errorID}, conn...)...)
	if code != exitOK {
		t.Fatalf("lookup of one reply seen by the agent and the client: exit %d (want 0)\nstdout:\n%s\nstderr: %s", code, out, errs)
	}
	for _, want := range []string{"SEEN BY", "agent-host", "client-laptop", "this record", "the same reply",
		"Seen by 2 observers: the agent (agent-host) and the client (client-laptop)", "QUOTA", "caller acme-orchestrator"} {
		if !strings.Contains(out, want) {
			t.Errorf("the story lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = cli(append([]string{"lookup", errorID, "--json"}, conn...)...)
	var st lookup.Story
	if code != exitOK || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("--json: exit %d, %s\n%s", code, errs, out)
	}
	o := st.Observers
	if st.Record.SourceKind != "agent" || st.Record.Caller != "acme-orchestrator" || st.Record.Agent != "newcomer-agent" ||
		st.Record.Kind != "quota" || st.Record.ErrorID != errorID || st.Record.MessageID != "msg-once-"+tag ||
		st.Record.HTTPRequestID != "req-once-"+tag || st.Record.Attempt != 1 {
		t.Errorf("the record is not the agent's copy as sent: %+v", st.Record)
	}
	if !o.Same || len(o.Copies) != 2 || o.Copies[0].SourceKind != "agent" || o.Copies[0].SourceID != "agent-host" ||
		o.Copies[1].SourceKind != "client" || o.Copies[1].SourceID != "client-laptop" || len(o.Copies[1].Differs) != 0 {
		t.Errorf("observers %+v; want the agent's copy and the client's, the same reply", o)
	}
	if n := len(st.Attempts.Attempts); n != 1 {
		t.Errorf("%d attempts; want 1 (the client's copy is not another attempt)", n)
	}
	if strings.Contains(out, "nc-Zq81") {
		t.Error("the planted Authorization value reached the story")
	}

	// A retried message names two replies: several matches, with observers.
	code, out, errs = cli(append([]string{"lookup", "msg-retried-" + tag}, conn...)...)
	if code != exitAmbiguous {
		t.Fatalf("a retried message: exit %d (want %d)\n%s\n%s", code, exitAmbiguous, out, errs)
	}
	if !strings.Contains(out, "2 distinct error replies carry this id (4 stored records") {
		t.Errorf("several matches do not count replies and records:\n%s", out)
	}
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "message_id") && strings.Contains(line, "newcomer-agent") || strings.Contains(line, "(client-laptop)") && strings.Contains(line, "message_id") {
			rows++
			if !strings.Contains(line, "agent (agent-host)") && !strings.Contains(line, "client (client-laptop)") {
				t.Errorf("a match without its observer: %q", line)
			}
		}
	}
	if rows != 4 {
		t.Errorf("%d match rows; want 4:\n%s", rows, out)
	}
	_, jout, _ := cli(append([]string{"lookup", "--json", "msg-retried-" + tag}, conn...)...)
	var amb struct {
		Matches []lookup.Match `json:"matches"`
		Total   int            `json:"total"`
		Replies int            `json:"replies"`
	}
	if err := json.Unmarshal([]byte(jout), &amb); err != nil || amb.Total != 4 || amb.Replies != 2 || len(amb.Matches) != 4 {
		t.Fatalf("several matches as JSON: %v %+v", err, amb)
	}
	perReply := map[int][]string{}
	for _, m := range amb.Matches {
		perReply[m.Reply] = append(perReply[m.Reply], m.SourceKind)
	}
	if fmt.Sprint(perReply[1]) != "[agent client]" || fmt.Sprint(perReply[2]) != "[agent client]" {
		t.Errorf("matches per reply %v; want each reply seen by the agent and the client", perReply)
	}

	// The API and the page: the same one story, with the same observers.
	base := serveFor(t, data.Addr, data.Database)
	apiCode, body := httpGet(t, base+"/v1/errors/"+errorID)
	var apiStory lookup.Story
	if apiCode != http.StatusOK || json.Unmarshal([]byte(body), &apiStory) != nil {
		t.Fatalf("API: %d\n%.300s", apiCode, body)
	}
	if apiStory.Record.EventID != st.Record.EventID || len(apiStory.Observers.Copies) != 2 ||
		apiStory.Observers.Summary != st.Observers.Summary || apiStory.Meaning.Text != st.Meaning.Text {
		t.Errorf("the API tells another story: record %s, observers %+v", apiStory.Record.EventID, apiStory.Observers)
	}
	pageCode, page := httpGet(t, base+"/errors?id="+errorID)
	if pageCode != http.StatusOK {
		t.Fatalf("page: %d", pageCode)
	}
	for _, want := range []string{`<h2 id="observers">Seen by</h2>`, html.EscapeString(st.Observers.Summary),
		`agent <strong class="mark">(this record)</strong>`, `<td>client-laptop</td>`, `<td>the same reply</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for what, s := range map[string]string{"API": body, "page": page, "ambiguous JSON": jout} {
		if strings.Contains(s, "nc-Zq81") {
			t.Errorf("the planted Authorization value reached the %s", what)
		}
	}
	ambCode, ambPage := httpGet(t, base+"/errors?id=msg-retried-"+tag)
	if ambCode != http.StatusMultipleChoices || !strings.Contains(ambPage, "client (client-laptop)") || !strings.Contains(ambPage, "agent (agent-host)") {
		t.Errorf("the page of a retried message: %d, observers listed: %v", ambCode, strings.Contains(ambPage, "client-laptop"))
	}
}

// serveFor starts `errtrail serve` on a free port for the test's database
// and returns its base URL; it stops when the test ends.
func serveFor(t *testing.T, addr, db string) string {
	t.Helper()
	listen := testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var errb syncBuf
	go func() {
		done <- run(ctx, append([]string{"serve", "--clickhouse.addr", addr, "--clickhouse.database", db, "--http.listen-address", listen}, serveHangGuard...), io.Discard, &errb)
	}()
	t.Cleanup(func() {
		cancel()
		if c := <-done; c != exitOK {
			t.Errorf("serve exited %d: %s", c, errb.String())
		}
	})
	base := "http://" + listen
	for i := 0; ; i++ {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			return base
		}
		if i > 100 {
			t.Fatalf("serve did not listen: %v (%s)", err, errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
