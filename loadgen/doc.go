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
// # History
//
// Config.History (cmd: --history 1h) publishes that much of the scenario's
// baseline before the scenario, as fast as Kafka takes it, so that the
// alerter's 1-hour baselines are full from its first evaluation: a runaway
// caller, a limit or an overload is then judged against what the same
// callers did before, not against an empty hour. The baseline is the
// scenario as it stands at its time 0 without incidents (history.go):
//
//   - callers at their first phase's rate (rate_per_min × rate_factor,
//     × Scale); a runaway caller at its own rate, never multiplied;
//   - retry policies unchanged: ignores-retry-after, rotates-ids and
//     no-retry callers behave so in the history too, so the retry-storm
//     verdicts (a 5-minute window, no baseline) are set when the scenario
//     starts, as for callers that always behaved so;
//   - agents with their own limits and shapes (a bare500 agent answers bare
//     500s: it is the agent);
//   - faults: no overload, no limit, no bare500, whatever their windows; a
//     gateway fault active at time 0 is the same gateway passing replies on
//     unchanged (both views published, none mangled), a later one absent;
//   - no bursts (the seed's worked example happens once) and no poison.
//
// Its observed_at run without a gap from History before Run's start up to
// the scenario's start: the history plays until it reaches the wall clock,
// waits for Kafka's acknowledgements, catches up again, and the scenario's
// time 0 is then (the demo's hour, 224,000 messages, takes about 6 s on
// the 2-core development machine). With the real clock the history's
// scenario time runs Speed× faster than observed_at, as the scenario's does:
// at Speed 12 an hour holds 12 hours of baseline (12× the messages a
// minute), which is what the alerter's windows divided by 12 expect; use a
// History of baseline/Speed (5m at Speed 12). With the scenario clock the
// history is [Start − History, Start) of scenario time at any speed.
// Unpaced (Speed 0) with the real clock there is no rate to keep: Run
// refuses the combination. MaxEvents counts the history's messages (a run
// cut inside its history plays no scenario); Duration starts with the
// scenario.
//
// Ids go on from the history into the scenario (event sequence, message,
// request and error ids, JSON-RPC ids): none repeats. Report.History counts
// the history apart, and every total of the Report includes it, so
// produced == stored rows holds for the whole run; Report.ScenarioStarted
// and Config.OnStart give the wall time at which the scenario began. Kafka record timestamps
// are the produce time for the history as for the scenario; only observed_at
// lies in the past. Kafka's retention and ingest's consumer_lag_seconds read
// record timestamps, and an hour-old timestamp would make both lie.
//
// There is no --start -1h: Config.Start already anchors the scenario clock,
// and moving the scenario itself an hour back would play its incidents in
// the past, where the history plays only the baseline before them.
//
// # Library API
//
//	sc, err := loadgen.LoadScenario("scenarios/overload.yaml") // or loadgen.Builtin("overload")
//	rep, err := loadgen.Run(ctx, loadgen.Config{
//		Brokers: []string{addr}, Topic: "errtrail.replies", Scenario: sc,
//		Speed: 10, Compression: true,
//		History: 6 * time.Minute, // optional: the alerter's 1h baseline at speed 10
//	})
//	// rep.Produced == rows(errors) + rows(dead_letter) once ingested, history included;
//	// rep.History.Produced of them observed in [rep.History.FromMS, rep.History.ToMS);
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
