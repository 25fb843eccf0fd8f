package emit

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/parse"
)

// replyPlanted are response headers an agent (or a proxy in front of it)
// may send that a deny-list misses: vendor key headers, identity-aware
// proxies' JWT assertions, short generic names, a *-Token name over 64
// bytes, URLs with credentials, WWW-Authenticate's error_description, and
// names never seen before. No value of theirs may reach Kafka.
var replyPlanted = [][2]string{
	{"X-Vendor-Api-Secret", "planted-vendor-4q7"},
	{"Openai-Organization", "planted-org-5x"},
	{"X-Goog-Iap-Jwt-Assertion", "eyJplanted.iap.assertion"},
	{"Cf-Access-Jwt-Assertion", "eyJplanted.cf.assertion"},
	{"X-Amzn-Oidc-Data", "eyJplanted.alb.oidc"},
	{"X-Key", "planted-xkey-88"},
	{"X-Auth", "planted-xauth-91"},
	{"X-Session", "planted-xsession-19"},
	{"X-Sess", "planted-xsess-20"},
	{"X-" + strings.Repeat("Long-", 14) + "Token", "planted-longtoken-55"},
	{"Location", "https://user:planted-pass-12@agent.example/cb?access_token=planted-at-33&code=planted-code-44"},
	{"Link", "<https://agent.example/next?access_token=planted-link-66>; rel=next"},
	{"Refresh", "0; url=https://agent.example/?code=planted-refresh-77"},
	{"WWW-Authenticate", `Bearer error="invalid_token", error_description="planted-desc-99"`},
	{"Mcp-Session-Id", "planted-session-10"},
	{"X-Never-Seen-Before", "planted-unseen-21"},
	{"Zz-Tenant-Passphrase", "planted-unseen-22"},
}

// allowListAgent answers every request with a JSON-RPC rate-limit error
// carrying the planted headers and the kept ones.
func allowListAgent() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for _, p := range replyPlanted {
			h[p[0]] = []string{p[1]}
		}
		h.Set("Content-Type", "application/json")
		h.Set("Retry-After", "12")
		h.Set("X-RateLimit-Resource", "search")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"jsonrpc":"2.0","id":"r1","error":{"code":-32029,"message":"rate limited"}}`)
	})
}

// TestHeaderAllowListThroughKafka: the middleware (agent side) and the
// transport (client side) publish, through the stack's Kafka, events in
// which no planted header value appears anywhere, while the kept headers
// still drive the record (retry after, the limit's name, the protocol
// from Mcp-Session-Id's presence).
func TestHeaderAllowListThroughKafka(t *testing.T) {
	brokers, topic := kafkaTopic(t)
	pub, err := newKafkaSink(brokers, topic)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(allowListAgent(), pub, Config{Agent: "research-agent"}))
	defer srv.Close()
	client := &http.Client{Transport: Transport(nil, pub, Config{Agent: "research-agent"})}
	req, _ := http.NewRequest("POST", srv.URL+"/jsonrpc", strings.NewReader(`{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("X-Key") != "planted-xkey-88" {
		t.Errorf("the client did not get the agent's headers: %v", resp.Header)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pub.Close(ctx); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, ev := range readEvents(t, brokers, topic, 2) {
		validEvent(t, ev)
		if strings.Contains(string(ev), "planted") {
			t.Errorf("a planted header value reached Kafka:\n%s", ev)
		}
		for _, p := range replyPlanted[:len(replyPlanted)-2] {
			if p[0] != "Mcp-Session-Id" && strings.Contains(strings.ToLower(string(ev)), strings.ToLower(`"`+p[0]+`"`)) {
				t.Errorf("header %s off the allow-list reached Kafka:\n%s", p[0], ev)
			}
		}
		rec, err := decodeMsg(ev, nil)
		if err != nil {
			t.Fatalf("decode: %v\n%s", err, ev)
		}
		kinds[rec.SourceKind] = true
		if rec.RetryAfterMS != 12000 || rec.Limit != "search" || rec.Protocol != parse.ProtocolMCP {
			t.Errorf("%s: retry after %d, limit %q, protocol %v: the kept headers do not drive the record\n%s",
				rec.SourceKind, rec.RetryAfterMS, rec.Limit, rec.Protocol, ev)
		}
	}
	if !kinds[KindAgent] || !kinds[KindClient] {
		t.Errorf("events from %v; want the agent's and the client's", kinds)
	}
}
