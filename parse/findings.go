package parse

// Finding is a stable code for a way in which a reply departs from the spec or
// seed its protocol follows. Findings never change the record's verdict; they
// tell the agent's owner what to fix. docs/record.md lists each with the
// sentence it checks.
type Finding string

const (
	// Seed 002: "Send that delay explicitly"; seed 000: "A typed RATE_LIMITED
	// MUST include details.retry_after_ms".
	FindRetryDelayMissing Finding = "retry_delay_missing"
	// Seed 002: "Round the delay up to whole seconds, and never send zero".
	FindRetryDelayZero Finding = "retry_delay_zero"
	// Seed 000: "an HTTP 429 MUST include Retry-After".
	FindRetryAfterHeaderMissing Finding = "retry_after_header_missing"
	// Seed 000: "A typed RATE_LIMITED MUST include details.retry_after_ms".
	FindAAPRetryAfterMSMissing Finding = "aap_retry_after_ms_missing"
	// A2A §10.6 / §11.6: an A2A error MUST carry a google.rpc.ErrorInfo in
	// details (gRPC and HTTP+JSON).
	FindErrorInfoMissing Finding = "errorinfo_missing"
	// Seed 002: "the a2a-protocol.org domain is reserved for A2A's own errors".
	FindReservedDomain Finding = "reserved_domain_misuse"
	// Seed 002: "codes -32010 and above are unassigned and a later revision may take them".
	FindUnassignedA2ACode Finding = "unassigned_a2a_code"
	// Seed 002: "Gateways sometimes strip bodies or rewrite 429 to 502".
	FindStatusBodyMismatch Finding = "status_body_mismatch"
	// Seed 002: "Gateways sometimes strip bodies"; a 4xx/5xx without a body.
	FindBodyMissing Finding = "body_missing"
	// Seed 000: "Honor the returned retryable value" and RATE_LIMITED's default
	// true; a rate limit marked retryable:false contradicts itself.
	FindRateLimitNotRetryable Finding = "rate_limit_not_retryable"
	// Seed 002: "Against an agent that returns a bare 500, the client cannot
	// tell a quota from a crash."
	FindUntyped5xx Finding = "untyped_5xx"
	// Seed 000: "Validation errors MUST list every currently detectable
	// problem in details.errors[]".
	FindValidationWithoutFields Finding = "validation_without_fields"
	// Seed 000: "Never echo customer values, credentials or internal stack traces."
	FindEchoesSecret Finding = "echoes_secret"
	// REFERENCE §3c: a grpc-status-details-bin Status.code that differs from
	// grpc-status must not be trusted.
	FindGRPCDetailsMismatch Finding = "grpc_details_mismatch"
	// Seed 002: "A client must not treat every RESOURCE_EXHAUSTED as a rate
	// limit; it should check for your ErrorInfo reason".
	FindResourceExhaustedUntyped Finding = "resource_exhausted_untyped"
	// Seed 000: "Duplicate the code in metadata for SDKs that omit reason".
	FindAAPCodeNotInMetadata Finding = "aap_code_not_in_metadata"
	// Seed 000: "standard ErrorInfo first in error.data[]".
	FindAAPErrorInfoNotFirst Finding = "aap_errorinfo_not_first"
	// A JSON object with the same member twice: readers disagree on which wins.
	FindDuplicateKey Finding = "duplicate_key"
	// Seed 000: an activation error "MUST name both the exact required
	// extension URI and A2A-Extensions in its message".
	FindActivationHintMissing Finding = "activation_hint_missing"
	// Seed 002: "MAY include retry guidance" in details; the JSON-RPC binding
	// should put meaning in error.data as typed objects. Internal stack traces
	// (DebugInfo) must not reach callers (seed 000).
	FindDebugInfoExposed Finding = "debug_info_exposed"
)

// AllFindings lists every Finding in documentation order.
var AllFindings = []Finding{
	FindRetryDelayMissing, FindRetryDelayZero, FindRetryAfterHeaderMissing, FindAAPRetryAfterMSMissing,
	FindErrorInfoMissing, FindReservedDomain, FindUnassignedA2ACode, FindStatusBodyMismatch,
	FindBodyMissing, FindRateLimitNotRetryable, FindUntyped5xx, FindValidationWithoutFields,
	FindEchoesSecret, FindGRPCDetailsMismatch, FindResourceExhaustedUntyped, FindAAPCodeNotInMetadata,
	FindAAPErrorInfoNotFirst, FindDuplicateKey, FindActivationHintMissing, FindDebugInfoExposed,
}
