// Package kafkapub publishes errtrail events to Kafka: Publisher is an
// emit.Sink with a bounded queue, batches and one goroutine of its own.
// Publish never blocks and never waits for Kafka; an event that cannot be
// queued or sent is dropped and counted (Metrics, emitprom for Prometheus).
//
//	pub, err := kafkapub.New(kafkapub.Config{Brokers: brokers, Topic: kafkapub.DefaultTopic})
//	...
//	defer pub.Close(ctx) // sends what is queued until ctx ends
//	handler = emit.Handler(handler, pub, emit.Config{Agent: "research-agent"})
//
// The topic must exist: the publisher never creates one, and New logs at
// ERROR when the brokers do not have it (CheckTopic, to refuse a start
// instead). It links kafka-go and the core; Prometheus' client only
// through emit/emitprom, when asked (docs/emit.md has the sizes).
package kafkapub
