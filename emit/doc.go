// Package emit lets agents, gateways and clients publish their error
// replies to errtrail with one line of code:
//
//	pub, err := kafkapub.New(kafkapub.Config{Brokers: brokers, Topic: "errtrail.replies"})
//	...
//	defer pub.Close(ctx)
//	srv.Handler = emit.Handler(mux, pub, emit.Config{Agent: "research-agent",
//		Caller: emit.CallerFromHeader("X-Caller")}) // an agent
//	client.Transport = emit.Transport(nil, pub, emit.Config{Source: emit.Source{Kind: emit.KindGateway}}) // a gateway or client
//
// docs/emit.md has these as whole programs (compiled by
// internal/docsnippets).
//
// # Packages
//
// Like otelhttp and otelgrpc, the pieces are apart, so an agent links only
// what it uses:
//
//   - emit (this package), the core: Event, Sink, Observer, the HTTP
//     middleware (Handler) and transport (Transport). It imports the
//     standard library and internal/keep only: no gRPC, Kafka client,
//     Prometheus client, decoder or redactor (TestUnitDependencies).
//   - emit/kafkapub: the Kafka publisher, a Sink (New, CheckTopic). The
//     topic must exist: it never creates one.
//   - emit/emitgrpc: the gRPC interceptors (UnaryServerInterceptor, …).
//   - emit/emitprom: the publisher's Prometheus metrics (NewMetrics),
//     registered only in the registry given.
//
// # What is published
//
// One Event (event JSON v1 of docs/event-contract.md, valid under
// docs/event.schema.json) per error reply: an HTTP status of 400 or more; a
// JSON body of a 2xx that holds a non-null "error" (JSON-RPC error,
// google.rpc.Status), an MCP tool result with "isError": true, or a task
// that ended FAILED; an event stream with an "error" event or such a JSON
// event. Detection follows the decoder's (detect.go). For a stream the
// event's body is the last error event of the stream, re-framed as SSE,
// which decodes to the same record as the whole stream (the decoder takes
// the last error event); it is published when the stream ends.
//
// event_id is the source id, a random prefix per Observer and a counter:
// unique per reply, and the same in every Kafka retry of the message.
//
// # What never leaves the process
//
// Reply headers leave the process only when they are on errtrail's
// allow-list (internal/keep, which the decoder reads as redact.KeptHeader:
// the headers the decoder reads — content
// type, retry and rate-limit headers, request ids, the gRPC status
// trailers; the protocols' transport headers such as Mcp-Session-Id by
// name only). Every other header is dropped whatever its name or value:
// Authorization, Set-Cookie, Location, Link, WWW-Authenticate, vendor and
// identity-proxy headers, names never seen before. The idempotency key
// header is never published either: the key travels only as
// request.idempotency_key, which ingest stores as a keyed hash. The
// endpoint is cleaned with the structure of the decoder's endpoint rule
// (internal/keep: userinfo, query and fragment dropped, value-like path
// segments as {id}); the decoder runs the whole rule, text pass included,
// on ingest and stores the same endpoint (CleanEndpoint). The body is published
// as seen: the decoder redacts message texts and kept bodies on ingest,
// and no body rule of redact keeps the decoded record identical (redacting
// the JSON would change messages, ids and findings such as echoes_secret).
// Tests check that decoding an event gives the same parse.Record as
// decoding the raw reply bytes captured on the wire.
//
// # Cost on the request path
//
// A Sink's Publish never blocks: kafkapub's marshals the event (a copy of
// the body) and puts it in a bounded queue, or drops and counts it
// (errtrail_emit_dropped_total{reason} with emitprom). The middleware holds nothing back:
// every Write and Flush reaches the client when the handler makes it. A
// success that is neither JSON nor an event stream is not looked at. A JSON
// success is copied as it passes (up to Config.MaxProbeBytes, 64 KiB) and
// inspected when the handler returns; a larger one passes as a success.
// Event-stream events are inspected one by one as they pass. Error bodies
// are copied up to Config.MaxBodyBytes (512 KiB); a body that passes the
// bound is published as it does (an endless stream too), one that breaks
// off (the handler aborts) when it does, both without the body and with
// Reply.BodyIncomplete (BodyTooLarge, BodyCut). The request body is copied (up to
// Config.MaxRequestBytes) as the handler reads it; only when an error is
// published and the handler did not read the body is the rest of that
// prefix read after the handler returned (never for Expect: 100-continue).
// http.Flusher, http.Hijacker, io.ReaderFrom and http.ResponseController
// (Unwrap) keep working.
//
// # Reuse (gRPC interceptors, the tap)
//
// Event, Sink, Observer (stamps source,
// event id and time, cleans headers and endpoint), the id extraction
// (ParseJSONRPC, ParseRoute, FromHeaders), the detection (JSONIsError,
// SSEScanner, KindOf) and the header rules (DropHeader, AppendHeaders,
// CleanHeaders, CleanEndpoint) are exported for them.
//
// A Sink must not keep an Event or its slices after Publish returns: the
// builders reuse their buffers.
package emit
