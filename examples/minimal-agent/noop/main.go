// Command noop is the emit core alone: one handler wrapped with
// emit.Handler, events handed to a sink that drops them (where an agent
// would plug a sink of its own). docs/performance.md measures its binary.
package main

import (
	"log"
	"net/http"
	"time"

	"github.com/errtrail/errtrail/emit"
)

func main() {
	sink := emit.SinkFunc(func(*emit.Event) bool { return true })
	agent := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"slow down"}}`, http.StatusTooManyRequests)
	})
	srv := &http.Server{Addr: "127.0.0.1:8080", ReadHeaderTimeout: 10 * time.Second,
		Handler: emit.Handler(agent, sink, emit.Config{Agent: "minimal-agent"})}
	log.Print(srv.ListenAndServe())
}
