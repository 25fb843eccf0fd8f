// Package loadgen publishes realistic agent error replies to Kafka, for the
// demo, the benchmarks and the fault and alerter tests. cmd/loadgen is its
// command line.
//
// # What it simulates
//
// A Scenario (YAML, see scenarios/*.yaml) names agents, callers, methods,
// phases, bursts, faults and poison. The tool runs each agent's per-caller
// token bucket (bucket in limiter.go: seed 002's worked example, 30 calls at
// once against 60/min with burst 10, gives 10 admitted and 20 rejections
// with RetryInfo delays 1..20 s) and lets callers retry as they would:
// honouring the delay, ignoring it, or rotating messageId and idempotency
// key. Only error replies become events; admitted calls are counted in the
// Report. Faults: overload (503 / UNAVAILABLE / AGENT_OVERLOADED for a
// share of all callers' calls), limit (the limit drops for a window, so all
// callers get 429), bare500 (rejections and a share of admitted calls end
// as 500s without a typed reason), gateway (each error is published twice,
// as the agent saw it, source.kind=agent, and as a gateway passed it on,
// source.kind=gateway, with the same message_id and http_request_id; the
// gateway rewrites statuses and/or strips bodies). Poison messages
// (PoisonKinds) are mixed in by count or share.
//
// Replies are built from templates of the seeds' examples (reply.go):
// a2a-http (HTTP+JSON google.rpc.Status, 429/503), a2a-jsonrpc (-32603 with
// ErrorInfo, RetryInfo, QuotaFailure), a2a-grpc (RESOURCE_EXHAUSTED or
// UNAVAILABLE with a hand-encoded grpc-status-details-bin), aap (seed 000's
// RATE_LIMITED), agentrelay and agentrelay-rest (seed 004's rate_limited),
// bare500, and corpus:<file>, a real capture from parse/testdata/corpus/
// whose ids and delays are replaced per event (corpus.go). Every event has a
// unique event_id, <run id>:<base-36 sequence>, fixed when the event is
// built, so kafka-go's retries re-send the same id; poison values that carry
// an id use <run id>:poison-<n>.
//
// # Time
//
// Config.Speed runs scenario time N× faster. Config.Clock chooses
// observed_at: "real" (default) stamps each event with the wall time at
// which it is sent, so windows shrink by Speed and what the ingester stores
// looks current; "scenario" stamps Start + scenario time, so gaps between an
// error and its retry keep their scenario length whatever the speed (use it
// to test ignored Retry-After detection at high speed). Speed 0 is unpaced
// (flood). A run always ends: at the scenario's end, at MaxEvents, after
// Duration, or when the context is done; Loop (flood) repeats the scenario
// and needs one of the bounds, which the command always sets.
//
// # Library API
//
//	sc, err := loadgen.LoadScenario("scenarios/overload.yaml") // or loadgen.Builtin("overload")
//	rep, err := loadgen.Run(ctx, loadgen.Config{
//		Brokers: []string{addr}, Topic: "errtrail.replies", Scenario: sc,
//		Speed: 10, Compression: true,
//	})
//	// rep.Produced == rows(errors) + rows(dead_letter) once ingested;
//	// rep.Valid distinct event_ids with sum(cityHash64(event_id)) == rep.EventIDHash;
//	// rep.By counts per agent × caller × kind × source; rep.PoisonByKind.
//	rep.WriteManifest("manifest.json")
//
// Report counts only messages Kafka acknowledged (async kafka-go Writer,
// counted in its Completion callback). EnsureTopic creates the topic when
// it is missing. Config.Output writes the messages to a writer instead of
// Kafka, one per line (cmd: --out), for inspection and broker-free tests.
//
// Caveats: the over-1-MiB poison passes a broker with the default
// message.max.bytes only because batches are lz4-compressed (Compression,
// on in the command); without compression the broker must accept 2 MiB.
// Kinds in the manifest are what the scenario simulated (quota, overload,
// untyped), not what a decoder can recover: a quota reply whose body a
// gateway stripped is still counted as quota with source gateway.
package loadgen
