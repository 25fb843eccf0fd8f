package lookup

import (
	"strconv"
	"time"

	"github.com/errtrail/errtrail/schema"
)

// recordOf turns a stored row into a Record with the conventions of `ingest
// decode` (parse/recordjson.go): unknown numbers are null.
func recordOf(r *schema.ErrorRow) Row {
	rec := Row{
		EventID: r.EventID, ObservedAt: observedAt(r), IngestedAt: r.IngestedAt.UTC(),
		KafkaTopic: r.KafkaTopic, KafkaPartition: r.KafkaPartition, KafkaOffset: r.KafkaOffset,
		SourceKind: r.SourceKind, SourceID: r.SourceID, SourceVersion: r.SourceVersion, Agent: r.Agent, Endpoint: r.Endpoint,
		Caller: r.Caller, Method: r.Method, Attempt: int(r.Attempt),
		HTTPRequestID: r.HTTPRequestID, JSONRPCID: r.JSONRPCID, MessageID: r.MessageID, TaskID: r.TaskID,
		Protocol: r.Protocol, Binding: r.Binding, Envelope: r.Envelope, GRPCStatus: r.GRPCStatus,
		Code: r.Code, Reason: r.Reason, Domain: r.Domain, Kind: r.Kind, Typed: r.Typed == 1,
		RetryableSource: r.RetryableSource, RetryAfterSource: r.RetryAfterSource,
		Limit: r.LimitName, Scope: r.Scope, ErrorID: r.ErrorID, RequestID: r.RequestID, Message: r.Message,
		FieldViolations: []Field{}, Findings: []string{},
	}
	if r.IdempotencyKeyHash != 0 {
		rec.IdempotencyKey = idemHex(r.IdempotencyKeyHash)
	}
	if r.HTTPStatus != 0 {
		v := int(r.HTTPStatus)
		rec.HTTPStatus = &v
	}
	if hasJSONRPC(r) {
		v := int(r.JSONRPCCode)
		rec.JSONRPCCode = &v
	}
	if r.Retryable >= 0 {
		v := r.Retryable == 1
		rec.Retryable = &v
	}
	if r.RetryAfterMS >= 0 {
		v := r.RetryAfterMS
		rec.RetryAfterMS = &v
	}
	for i, f := range r.ViolationFields {
		fv := Field{Field: f}
		if i < len(r.ViolationDescriptions) {
			fv.Description = r.ViolationDescriptions[i]
		}
		rec.FieldViolations = append(rec.FieldViolations, fv)
	}
	rec.Findings = append(rec.Findings, r.Findings...)
	return rec
}

// withTrace adds to rec what error_traces holds of it (migration 009).
func withTrace(rec *Row, t *schema.TraceRow) {
	rec.TraceID, rec.SpanID, rec.Origin, rec.Inferred = t.TraceID, t.SpanID, t.Origin, t.Inferred
}

// hasJSONRPC tells whether the reply carried a JSON-RPC code. The row keeps
// the code but not parse.Record.HasJSONRPC: a code other than 0 was
// carried; 0 was carried only in the two envelopes whose decoding requires
// a numeric code (a JSON-RPC error object, an a2a-js v0.3 flat body), which
// is how the MCP Go SDK's 0 arrives.
func hasJSONRPC(r *schema.ErrorRow) bool {
	return r.JSONRPCCode != 0 || r.Envelope == "jsonrpc_error" || r.Envelope == "legacy_flat"
}

func observedAt(r *schema.ErrorRow) time.Time {
	if r.ObservedAtMS > 0 {
		return time.UnixMilli(int64(r.ObservedAtMS)).UTC()
	}
	return r.ObservedAt.UTC()
}

// idemHex renders the idempotency key hash as 16 hex digits.
func idemHex(h uint64) string {
	s := strconv.FormatUint(h, 16)
	for len(s) < 16 {
		s = "0" + s
	}
	return s
}

// matchOf is the short form of a row listed among several matches.
func matchOf(r *schema.ErrorRow, as string) Match {
	return Match{EventID: r.EventID, ErrorID: r.ErrorID, MatchedAs: as, Agent: r.Agent, Caller: r.Caller,
		Kind: r.Kind, Code: r.Code, ObservedAt: observedAt(r), SourceKind: r.SourceKind, SourceID: r.SourceID}
}
