// Package conformance checks error replies against the rules of their
// protocol, one reply at a time and with no Kafka or ClickHouse: what
// `errtrail check` runs, and what an agent team calls from its own tests.
//
// A Checker decodes a reply with parse (a raw HTTP/1.1 response, a gRPC
// reply text form or event JSON, as `ingest decode` accepts) and returns a
// Result: what the reply was read as, and every rule of parse.Rules it
// breaks, each with its level, the seed sentence it checks and the fix. A
// broken MUST is a violation (Result.Violations); a broken SHOULD is advice.
//
// Why a package of its own rather than report/: report counts findings
// stored in ClickHouse over a time range and needs a connection; this
// package needs only the decoder and the rules table, so a team can import
// it into its tests without pulling a database driver's configuration
// along. Both read the same rows (parse.Rules), so a rule reads the same in
// the report, the story and here.
//
// Bad input: a reply the decoder cannot read comes back as the decoder's
// *parse.DecodeError (its Reason is the dead-letter reason). A success reply
// (a JSON-RPC result, an agent card) is no error reply: Result.NotAnError is
// set and no rule is checked.
package conformance
