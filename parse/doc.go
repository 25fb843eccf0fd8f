// Package parse decodes the error replies of agent protocols — A2A over
// JSON-RPC, HTTP+JSON and gRPC; AAP in its MCP, A2A and PAP bindings; MCP;
// AgentRelay — into one normalized Record.
//
// A Decoder reads one Kafka message at a time (event JSON, a raw HTTP/1.1
// response, or a gRPC reply text form; see docs/event-contract.md), picks the
// envelope by the shape of the reply and its typed details, and classifies
// it: protocol, symbolic code, kind (quota, overload, invalid, …), whether
// and when a retry may help, and findings about how well the emitter follows
// its spec. Status and JSON-RPC numbers collide between protocols, so typed
// details decide first; a number decides only the five standard JSON-RPC
// codes, or a protocol-specific code once the protocol is known from the
// method name.
//
// The decoder is pure (no I/O) and, once a Decoder and its Record are warm,
// decodes a reply without allocating: JSON is validated once into a reusable
// tape and walked without copying; strings in a Record are views of the
// input or of the Decoder's arena, valid until the next call on the same
// Decoder (Record.Clone copies them). The exceptions, each pinned with its
// figure in allocs_test.go: keeping the raw body (Options.KeepRaw, on by
// default) costs an allocation per reply in redact.Raw; a message text with a
// digit run the phone-number detector must check costs dozens; a decode
// error allocates its *DecodeError, and so does a body that is not valid JSON
// even when the a2a-java legacy reader then decodes it. A Decoder is not
// safe for concurrent use; give each goroutine its own.
//
// A decode's time is linear in its message, whatever the message holds:
// framing, JSON and headers are single passes, and every text pass goes
// through the Decoder's redact.Redactor, whose Work the tests hold to a
// fixed multiple of the input's length (linear_test.go, FuzzDecodeMessage).
//
// Bad input never panics: a message that cannot be decoded returns a
// *DecodeError with a stable Reason (the dead-letter reason), the path of the
// section that failed and, where it applies, the byte offset.
//
// Nothing secret reaches a Record: only the reply headers on the allow-list
// (redact.KeptHeader, what the decoder reads) are kept on input,
// and message texts, field-violation descriptions and kept bodies pass
// through redaction (bearer tokens, JWTs, API keys, e-mail addresses and
// phone numbers become placeholders).
//
// docs/record.md documents every field, the rules for kind and retry, and
// each Finding with the sentence of the seed or spec it checks.
package parse
