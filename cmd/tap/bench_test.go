package main

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkTapRequest: one JSON-RPC request at a time, straight to the
// upstream and through an in-process tap (events to a closed port), side
// by side. What the hop costs, not a latency under load (see
// TestMeasureTapOverhead):
//
//	go test ./cmd/tap -run '^$' -bench TapRequest -benchmem
func BenchmarkTapRequest(b *testing.B) {
	upstream := measureUpstream(b)
	proxy, _ := startTap(b, upstream, []string{closedPort(b)}, "errtrail.tap-bench")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	body := `{"jsonrpc":"2.0","id":"r1","method":"GetTask","params":{"id":"t-1"}}`
	for _, tg := range []struct{ name, base string }{{"straight", upstream}, {"tap", "http://" + proxy}} {
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
