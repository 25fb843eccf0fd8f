package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkTapRequest: one JSON-RPC request at a time, straight to the
// upstream, through a bare httputil.ReverseProxy with the tap's transport
// and copy buffers, and through an in-process tap (events to a closed
// port), side by side. What the hop costs and what the tap adds to a bare
// proxy (allocations per request do not vary with the machine's load),
// not a latency under load (see TestMeasureTapOverhead, TestMeasureTapRatio):
//
//	go test ./cmd/tap -run '^$' -bench TapRequest -benchmem
func BenchmarkTapRequest(b *testing.B) {
	upstream := measureUpstream(b)
	proxy, _ := startTap(b, upstream, []string{closedPort(b)}, "errtrail.tap-bench")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	body := `{"jsonrpc":"2.0","id":"r1","method":"GetTask","params":{"id":"t-1"}}`
	o, err := parseFlags([]string{"--upstream", upstream, "--kafka.brokers", closedPort(b)}, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	bare := httptest.NewServer(&httputil.ReverseProxy{Rewrite: rewriteTo(o), Transport: upstreamTransport(o), BufferPool: copyBuffers{}})
	defer bare.Close()
	for _, tg := range []struct{ name, base string }{{"straight", upstream}, {"bare", bare.URL}, {"tap", "http://" + proxy}} {
		b.Run(tg.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 1
			for b.Loop() {
				i++
				if i%20 == 0 {
					i++ // successes only: the error path is emit's benchmark
				}
				resp, err := client.Post(tg.base+"/rpc?n="+strconv.Itoa(i), "application/json", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
