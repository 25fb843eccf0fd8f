// Command kafka is the smallest agent that publishes its error replies to
// errtrail through Kafka: one handler wrapped with emit.Handler, events
// published by emit/kafkapub. docs/performance.md measures its binary.
package main

import (
	"context"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/errtrail/errtrail/emit"
	"github.com/errtrail/errtrail/emit/kafkapub"
)

func main() {
	brokers := os.Getenv("ERRTRAIL_KAFKA_BROKERS")
	if brokers == "" {
		brokers = "127.0.0.1:19092"
	}
	pub, err := kafkapub.New(kafkapub.Config{Brokers: strings.Split(brokers, ","), Topic: kafkapub.DefaultTopic})
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = pub.Close(ctx)
	}()
	agent := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"slow down"}}`, http.StatusTooManyRequests)
	})
	srv := &http.Server{Addr: "127.0.0.1:8080", ReadHeaderTimeout: 10 * time.Second,
		Handler: emit.Handler(agent, pub, emit.Config{Agent: "minimal-agent"})}
	log.Print(srv.ListenAndServe())
}
