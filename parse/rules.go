package parse

// This file is the one table of conformance rules: one row per Finding,
// holding everything errtrail says about it — the seed (or spec) sentence
// it checks, whether that sentence is a MUST or a SHOULD, a title, when the
// decoder raises it and what the agent team should change. The decoder's
// findings (the constants in findings.go, raised in classify.go), the
// story's guide (lookup.GuideFor), the conformance report (report/), the
// per-reply check (conformance/, `errtrail check`) and docs/record.md's
// Findings table all read these rows; rules_test.go holds them equal.
//
// A rule's Name is stored in the errors table's findings column: never
// rename one.

// Level is how strongly the sentence a rule checks binds the agent.
type Level string

const (
	// LevelMust: the sentence says MUST, must, never, required, or states
	// the format as the protocol's own. A broken MUST is a violation.
	LevelMust Level = "MUST"
	// LevelShould: a recommendation (the seed says should, recommends, or
	// explains why). A broken SHOULD is advice, not a violation.
	LevelShould Level = "SHOULD"
)

// Rule is one conformance rule.
type Rule struct {
	Name     Finding // the finding id, stored data: stable
	Seed     string  // "000", "002", "003", "004"; "" when the rule is not from a seed (Source names it)
	Source   string  // where Sentence comes from: "Seed 002", "RFC 8259 §4", …
	Sentence string  // the sentence it checks, quoted word for word from Source
	Level    Level
	Title    string // a short title for the agent team
	When     string // when the decoder raises it (docs/record.md, "Raised when")
	Change   string // what the agent team should change
}

// Checks is the rule's sentence with its source, as guides and reports show it.
func (r *Rule) Checks() string { return r.Source + `: "` + r.Sentence + `"` }

// Rules is the table, in documentation order.
var Rules = [...]Rule{
	{FindRetryDelayMissing, "002", "Seed 002", "Send that delay explicitly rather than making every client guess with exponential backoff.", LevelShould,
		"A rate limit without a delay",
		"kind quota and no delay anywhere",
		"Put the time until the limiter admits this caller again in every quota rejection: google.rpc.RetryInfo retryDelay in the details and Retry-After in seconds on HTTP (AAP: details.retry_after_ms), computed from the limiter's state."},
	{FindRetryDelayZero, "002", "Seed 002", "Round the delay up to whole seconds, and never send zero", LevelShould,
		"A rate limit that asks for no wait",
		"kind quota and the delay is 0",
		"Round the delay up to at least one whole second; a zero delay invites an immediate retry that is rejected again."},
	{FindRetryAfterHeaderMissing, "000", "Seed 000", "an HTTP 429 MUST include `Retry-After`", LevelMust,
		"HTTP 429 without Retry-After",
		"HTTP 429 without `Retry-After`",
		"Send a Retry-After header (seconds) with every 429, repeating the delay of the body for clients and proxies that never read bodies."},
	{FindAAPRetryAfterMSMissing, "000", "Seed 000", "A typed `RATE_LIMITED` MUST include `details.retry_after_ms`", LevelMust,
		"AAP RATE_LIMITED without retry_after_ms",
		"AAP `RATE_LIMITED` payload without `details.retry_after_ms`",
		"Add details.retry_after_ms to the aap.error payload of every RATE_LIMITED reply."},
	{FindErrorInfoMissing, "003", "Seed 003", "For an A2A error, an implementation must put a `google.rpc.ErrorInfo` object in the `details` array.", LevelMust,
		"A2A error without ErrorInfo",
		"A2A HTTP+JSON or gRPC error without ErrorInfo",
		"Add a google.rpc.ErrorInfo detail with the error's reason and your domain to every HTTP+JSON and gRPC error, so clients decide on the reason rather than the status."},
	{FindReservedDomain, "002", "Seed 002", "the a2a-protocol.org domain is reserved for A2A's own errors", LevelMust,
		"Own reason in the a2a-protocol.org domain",
		"domain `a2a-protocol.org` with a reason that is not an A2A error",
		"Use your own domain (for example agents.example.com) in ErrorInfo for reasons that are not A2A errors; keep a2a-protocol.org for the nine A2A errors."},
	{FindUnassignedA2ACode, "002", "Seed 002", "There is no A2A-specific rate-limit error, so do not invent one: codes -32010 and above are unassigned and a later revision may take them.", LevelMust,
		"Unassigned A2A JSON-RPC code",
		"A2A JSON-RPC code in -32010…-32099",
		"Do not invent A2A codes: use a standard code (-32603 for a rate limit, as the spec's example) and put the meaning in typed error.data details."},
	{FindStatusBodyMismatch, "002", "Seed 002", "Gateways sometimes strip bodies or rewrite 429 to 502.", LevelMust,
		"HTTP status and body disagree",
		"the HTTP status differs from the status the body states (Status `code`, problem `status`, AgentRelay symbol's status), or a typed rate limit behind a 5xx other than 503 (a PAP code's status is `pap_status_not_mapped`)",
		"Make the HTTP status match the status the body states, and check every gateway and proxy in front of the agent: send a rejection end to end in staging and assert the status, reason and delay arrive unchanged."},
	{FindBodyMissing, "002", "Seed 002", "Either way the body must carry everything.", LevelMust,
		"Error reply without a body",
		"HTTP ≥ 400 with an empty body",
		"Return the error body (JSON-RPC error, google.rpc.Status or aap.error) with every 4xx and 5xx; if the agent does, find the gateway that strips it."},
	{FindRateLimitNotRetryable, "002", "Seed 002", "Then the answer is always no, and the retry is safe.", LevelShould,
		"Rate limit marked not retryable",
		"kind quota and the reply says `retryable: false`",
		"Mark rate-limit rejections retryable (they are decided at admission, before any side effect; AAP's RATE_LIMITED defaults to true), or use a code that is not a rate limit if the caller must not retry."},
	{FindUntyped5xx, "002", "Seed 002", "Against an agent that returns a bare 500, the client cannot tell a quota from a crash.", LevelShould,
		"Bare server error",
		"5xx, -32603, gRPC INTERNAL/UNKNOWN without a typed reason (not overload)",
		"Return a typed reason with every server error: ErrorInfo (or an aap.error, an AgentRelay symbol) that says whether it is a quota, an overload or a crash; a quota should be 429 / RESOURCE_EXHAUSTED, an overload 503 / UNAVAILABLE."},
	{FindValidationWithoutFields, "000", "Seed 000", "Validation errors MUST list every currently detectable problem in `details.errors[]`.", LevelMust,
		"Validation error that names no field",
		"an AAP validation code without `details.errors[]`, or A2A invalid params without BadRequest",
		"List every invalid field with its location and the constraint it breaks (AAP details.errors[] with instanceLocation and keyword, or google.rpc.BadRequest fieldViolations), never the submitted value."},
	{FindEchoesSecret, "000", "Seed 000", "Never echo customer values, credentials or internal stack traces.", LevelMust,
		"Reply echoes a secret or customer value",
		"redaction replaces something in any text of the reply: the message, a `details.errors[].error`, the `hint`, a problem `title` or `detail`, a field description",
		"Remove credentials, tokens and customer values (e-mail addresses, phone numbers) from error messages and field descriptions; name the field instead of quoting what was sent."},
	{FindGRPCDetailsMismatch, "", "REFERENCE §3c", "a details code that differs from `grpc-status` must not be trusted", LevelShould,
		"gRPC details disagree with grpc-status",
		"`grpc-status-details-bin` unparseable or with a code other than `grpc-status` (details then ignored)",
		"Send a grpc-status-details-bin whose google.rpc.Status code equals grpc-status, and make sure it parses; clients ignore details that contradict the status."},
	{FindResourceExhaustedUntyped, "002", "Seed 002", "A client must not treat every RESOURCE_EXHAUSTED as a rate limit; it should check for your ErrorInfo reason", LevelShould,
		"RESOURCE_EXHAUSTED without a limiter reason",
		"gRPC RESOURCE_EXHAUSTED without a limiter ErrorInfo",
		"When your limiter rejects a call with RESOURCE_EXHAUSTED, add the ErrorInfo reason (e.g. RATE_LIMIT_EXCEEDED in your domain) and RetryInfo; without them clients must treat it as gRPC's local, non-retryable error."},
	{FindAAPCodeNotInMetadata, "000", "Seed 000", "Duplicate the code in metadata for SDKs that omit `reason`.", LevelMust,
		"AAP code missing from ErrorInfo metadata",
		"AAP over A2A with an ErrorInfo lacking metadata `code`",
		"Copy the AAP code into the ErrorInfo metadata key \"code\" (with error_id, retryable and created_at)."},
	{FindAAPErrorInfoNotFirst, "000", "Seed 000", "JSON-RPC error, standard `ErrorInfo` first in `error.data[]`", LevelMust,
		"AAP ErrorInfo not first",
		"AAP over A2A with the ErrorInfo not first in the details",
		"Put the google.rpc.ErrorInfo first in error.data[], before the aap.error Struct and any other detail."},
	{FindRetryDelayDisagree, "002", "Seed 002", "The headers repeat the delay for clients and proxies that never read bodies.", LevelShould,
		"Retry-After and the body's delay disagree",
		"a `Retry-After` in seconds that is not the body's delay (RetryInfo, `retry_after_ms`) rounded up to whole seconds; an HTTP-date `Retry-After` is not compared",
		"Compute the delay once and send it in both places: Retry-After in whole seconds, rounded up from the body's RetryInfo or retry_after_ms. Clients wait the larger, so a short header does not help."},
	{FindQuotaOverloadSwapped, "002", "Seed 002", "These are different situations and should have different codes: 429 or RESOURCE_EXHAUSTED for quota, 503 or UNAVAILABLE for overload.", LevelShould,
		"Quota and overload statuses swapped",
		"a typed quota reason with HTTP 503 or gRPC UNAVAILABLE, or a typed overload reason with HTTP 429 or gRPC RESOURCE_EXHAUSTED",
		"Send 429 / RESOURCE_EXHAUSTED when this caller is over its quota and 503 / UNAVAILABLE when the agent is overloaded for everyone, matching the ErrorInfo reason."},
	{FindRetryInfoMissing, "002", "Seed 002", "Return 429 or RESOURCE_EXHAUSTED for caller quota and 503 or UNAVAILABLE for overload, with RetryInfo, Retry-After in seconds and ErrorInfo in your own domain.", LevelShould,
		"A2A rate limit without RetryInfo",
		"an A2A quota rejection (HTTP 429 or RESOURCE_EXHAUSTED) whose details carry no `google.rpc.RetryInfo`",
		"Add a google.rpc.RetryInfo detail with retryDelay (\"12s\") to every quota rejection: clients prefer it to headers, which proxies may drop."},
	{FindAAPRequiredMissing, "000", "Seed 000", "`type`, `error_id`, `code`, `message`, `retryable` and `created_at` are required.", LevelMust,
		"aap.error without a required member",
		"an `aap.error` without `type` (\"aap.error\"), `error_id`, `code`, `message`, `created_at` (strings) or `retryable` (a boolean)",
		"Send every member seed 000 requires in each aap.error: type, error_id, code, message, retryable (true or false) and created_at (RFC 3339)."},
	{FindAAPUnknownCode, "000", "Seed 000", "Skill errors use the same `aap.error` object across all three bindings.", LevelMust,
		"AAP code not in the code reference",
		"an `aap.error` whose `code` is not a row of seed 000's error code reference",
		"Use one of the codes of AAP's error code reference (UNSUPPORTED_SKILL … INTERNAL_ERROR); put the specific cause in message and details, not in a code of your own."},
	{FindAAPErrorItemIncomplete, "000", "Seed 000", "Each item uses a JSON Pointer `instanceLocation`, a constraint `keyword` and a safe explanation in `error`.", LevelMust,
		"Validation item without location, keyword or explanation",
		"a `details.errors[]` item whose `instanceLocation` is missing or not a JSON Pointer, or without a `keyword` or an `error`",
		"Give every details.errors[] item a JSON Pointer instanceLocation (\"/filters/features_all\", not \"filters.features_all\"), the constraint keyword it breaks and a safe explanation in error."},
	{FindAAPReasonNotCode, "000", "Seed 000", "For skill errors, the first `google.rpc.ErrorInfo` has `reason` equal to the AAP code and `domain: \"autoagentprotocol.org\"`.", LevelMust,
		"ErrorInfo reason is not the AAP code",
		"AAP over A2A whose first ErrorInfo has a `reason` other than the aap.error's code (an SDK's INTERNAL_ERROR wrapping RATE_LIMITED)",
		"Set the first ErrorInfo's reason to the AAP code itself (RATE_LIMITED, not the SDK's INTERNAL_ERROR): raise the AAP error through your SDK's typed-error path instead of letting it wrap the error."},
	{FindAAPDomainWrong, "000", "Seed 000", "For skill errors, the first `google.rpc.ErrorInfo` has `reason` equal to the AAP code and `domain: \"autoagentprotocol.org\"`.", LevelMust,
		"ErrorInfo domain is not autoagentprotocol.org",
		"AAP over A2A whose first ErrorInfo has a `domain` other than `autoagentprotocol.org`",
		"Set the ErrorInfo domain of AAP skill errors to autoagentprotocol.org; a2a-protocol.org is for A2A's own errors."},
	{FindAAPMetadataNotString, "000", "Seed 000", "Its string-valued metadata includes `code`, `error_id`, `retryable` and `created_at`.", LevelMust,
		"ErrorInfo metadata value that is not a string",
		"AAP over A2A with an ErrorInfo metadata value that is not a JSON string (a boolean `retryable`, a `details` object)",
		"Send ErrorInfo metadata as a map of strings (\"retryable\": \"true\"); do not spread the aap.error into metadata: send it as its own Struct detail."},
	{FindAAPMetadataIncomplete, "000", "Seed 000", "Its string-valued metadata includes `code`, `error_id`, `retryable` and `created_at`.", LevelMust,
		"ErrorInfo metadata lacks error_id, retryable or created_at",
		"AAP over A2A with an ErrorInfo whose metadata lacks `error_id`, `retryable` or `created_at` (a missing `code` is `aap_code_not_in_metadata`)",
		"Copy error_id, retryable and created_at of the aap.error into the ErrorInfo metadata, as strings."},
	{FindAAPPayloadNotStruct, "000", "Seed 000", "The AAP payload is a separate standard Any detail with `@type: \"type.googleapis.com/google.protobuf.Struct\"` and `value.type: \"aap.error\"`.", LevelMust,
		"aap.error not a separate Struct detail",
		"AAP over A2A whose aap.error is not a `google.protobuf.Struct` detail of its own (absent, spread into ErrorInfo metadata, or sent as the error's data object)",
		"Add the aap.error as its own detail {\"@type\": \"type.googleapis.com/google.protobuf.Struct\", \"value\": {\"type\": \"aap.error\", …}} after the ErrorInfo."},
	{FindAAPJSONRPCCodeMismatch, "000", "Seed 000", "These are the A2A numeric mappings.", LevelMust,
		"JSON-RPC code is not the AAP code's",
		"AAP over A2A JSON-RPC whose `error.code` is not the code reference's number (RATE_LIMITED -32000, INTERNAL_ERROR -32603, validation -32602)",
		"Send the JSON-RPC code of AAP's code reference: -32602 for the validation, skill, filter, sort and cursor codes, -32603 for INTERNAL_ERROR, -32000 for the others (RATE_LIMITED included)."},
	{FindEchoesStackTrace, "000", "Seed 000", "Never echo customer values, credentials or internal stack traces.", LevelMust,
		"Reply echoes a stack trace",
		"a frame of a stack trace (Java, .NET, JavaScript, Python, Go, Ruby, PHP or Rust form) in any text of the reply: the message, a `details.errors[].error`, the `hint`, a problem `title` or `detail`, a field description",
		"Catch the exception at the agent's edge, log its trace there with the error_id, and send the caller a safe explanation of what to change instead of the trace."},
	{FindAAPErrorIDIdentity, "000", "Seed 000", "Correlation IDs must be suitable for support without exposing shopper identity.", LevelMust,
		"error_id exposes the shopper",
		"an AAP `error_id` (of the aap.error or the ErrorInfo metadata) holding what redaction replaces: an e-mail address, a phone number, a national id, a credential",
		"Generate error ids at random (a prefixed ULID or UUID such as err_01HZ9RATE01); never build them from the shopper's e-mail address, phone number or customer number."},
	{FindAAPMCPNotIsError, "000", "Seed 000", "Completed tool result, `isError: true`, typed error in `structuredContent` and matching serialized JSON text in `content`", LevelMust,
		"MCP skill failure not marked isError",
		"a JSON-RPC result carrying an aap.error without `isError: true` (absent or false), or with a `resultType` other than `complete`",
		"Return every skill failure as a completed tool result with isError: true: a client reads a result without it as the skill's success."},
	{FindAAPMCPContentMismatch, "000", "Seed 000", "Completed tool result, `isError: true`, typed error in `structuredContent` and matching serialized JSON text in `content`", LevelMust,
		"structuredContent and content text disagree",
		"an MCP tool result whose aap.error in `structuredContent` and the JSON text in `content` are not the same value (one of them missing, the text not JSON, or a member differing)",
		"Serialize the structuredContent aap.error once and send that JSON as the text content, so clients that read only content see the same error."},
	{FindAAPMCPProtocolError, "000", "Seed 000", "Completed tool result, `isError: true`, typed error in `structuredContent` and matching serialized JSON text in `content`", LevelMust,
		"MCP skill failure sent as a protocol error",
		"an MCP server's JSON-RPC error (an MCP method, or an MCP transport header) carrying an aap.error or an AAP code",
		"Return skill failures of tools/call as a tool result with isError: true and the aap.error in structuredContent; keep JSON-RPC errors for protocol failures (an unknown tool, a malformed request, a missing token, an unsupported version)."},
	{FindPAPStatusNotMapped, "000", "Seed 000", "PAP maps unsupported skill, unknown vehicle and unknown or inaccessible dealer (`DEALER_NOT_FOUND`) to 404, schema/filter/sort/cursor problems to 422, consent to 403, availability/appointment/idempotency conflict to 409, throttling to 429 and internal failure to 500.", LevelMust,
		"PAP status is not the code's mapped status",
		"a PAP aap.error body whose HTTP status is not its code's (404, 422, 403, 409, 429 or 500)",
		"Send the status AAP maps the code to: 404 for UNSUPPORTED_SKILL, VEHICLE_NOT_FOUND and DEALER_NOT_FOUND, 422 for schema, filter, sort and cursor codes, 403 for consent, 409 for VEHICLE_UNAVAILABLE, APPOINTMENT_TIME_UNAVAILABLE and IDEMPOTENCY_CONFLICT, 429 for RATE_LIMITED, 500 for INTERNAL_ERROR."},
	{FindPAPBodyNotDirect, "000", "Seed 000", "Direct `aap.error` JSON body with the mapped HTTP status", LevelMust,
		"PAP aap.error wrapped in an error member",
		"a PAP reply whose aap.error is the `error` member of the body instead of the body itself",
		"Send the aap.error object itself as the response body ({\"type\": \"aap.error\", …}), not wrapped in {\"error\": …}."},
	{FindAAPAppointmentConceals, "000", "Seed 000", "`APPOINTMENT_TIME_UNAVAILABLE` must not conceal an accepted lead.", LevelMust,
		"APPOINTMENT_TIME_UNAVAILABLE hides an accepted lead",
		"an `APPOINTMENT_TIME_UNAVAILABLE` whose details or message show that the lead was accepted (a lead id, a lead or submission status accepted, a lead.submit.response)",
		"When the lead is accepted but no appointment time is, return lead.submit.response with both outcomes (lead accepted, appointment declined); send APPOINTMENT_TIME_UNAVAILABLE only when the whole submission was rejected."},
	{FindDuplicateKey, "", "RFC 8259 §4", "The names within an object SHOULD be unique.", LevelShould,
		"A member appears twice in the body",
		"a top-level member of the body appears twice",
		"Emit each member of the error object once: readers disagree on which copy wins. The serializer or a middleware that merges objects is writing it twice."},
	{FindActivationHintMissing, "000", "Seed 000", "An activation error MUST name both the exact required extension URI and `A2A-Extensions` in its message.", LevelMust,
		"Activation error without its recovery hint",
		"`EXTENSION_SUPPORT_REQUIRED` whose message lacks `A2A-Extensions` or the extension URI, or without `extensionUri` metadata",
		"Name the exact extension URI and the A2A-Extensions header in the message of EXTENSION_SUPPORT_REQUIRED, and set the ErrorInfo metadata extensionUri and requiredHeader."},
	{FindDebugInfoExposed, "000", "Seed 000", "Never echo customer values, credentials or internal stack traces.", LevelMust,
		"Stack trace sent to the caller",
		"a `google.rpc.DebugInfo` detail",
		"Drop google.rpc.DebugInfo (stack entries, internal detail) from replies to callers; log it on the agent's side with the error id instead."},
	{FindA2ABodyNotStatus, "003", "Seed 003", "An HTTP+JSON error uses the HTTP status and a JSON `google.rpc.Status`", LevelMust,
		"HTTP+JSON error body is not a google.rpc.Status",
		"an A2A HTTP+JSON error whose body is not `{\"error\": {code, status, message, details}}`: the Status members at the top level, a flat `{code, message}` (A2A v0.3), a problem-details body, a bare string or other JSON",
		"Answer every HTTP+JSON error with {\"error\": {\"code\": <HTTP status>, \"status\": \"<google.rpc.Code name>\", \"message\": \"…\", \"details\": [ErrorInfo, …]}}; do not put the Status members at the top level or send problem details."},
	{FindA2AMediaType, "003", "Seed 003", "Send `application/a2a+json`, and accept all three types when you read.", LevelShould,
		"Error body in a media type clients do not accept",
		"an A2A error with a JSON body whose Content-Type is not `application/a2a+json`, `application/json` or `application/problem+json` (parameters such as charset ignored; event streams not checked)",
		"Send error bodies as application/a2a+json (application/json is accepted too); text/plain or a missing Content-Type makes strict clients drop the error."},
	{FindStatusCodeNotHTTP, "003", "Seed 003", "Its `error` object repeats the status in `code`, names the gRPC status in `status`, and adds `message` and `details`", LevelMust,
		"Status code is not the HTTP status",
		"a google.rpc.Status body whose `code` is missing, not an HTTP status (a google.rpc.Code number such as 5) or differs from a non-error HTTP status (HTTP 4xx/5xx against another 4xx/5xx is `status_body_mismatch`)",
		"Put the HTTP status of the reply in error.code (404, not 5 for NOT_FOUND) and send the reply with that status; the google.rpc.Code name goes in error.status."},
	{FindStatusNameMismatch, "003", "Seed 003", "Its `error` object repeats the status in `code`, names the gRPC status in `status`, and adds `message` and `details`", LevelMust,
		"Status name does not fit the code",
		"a google.rpc.Status body whose `status` is missing, not a google.rpc.Code name, or a name whose HTTP mapping is not the body's `code` (404 with FAILED_PRECONDITION)",
		"Set error.status to the google.rpc.Code name whose HTTP mapping is error.code: NOT_FOUND for 404, FAILED_PRECONDITION or INVALID_ARGUMENT for 400, INTERNAL for 500."},
	{FindA2AReasonCodeMismatch, "003", "Seed 003", "The specification defines nine A2A errors and maps each one into every binding", LevelMust,
		"ErrorInfo reason and JSON-RPC code name different errors",
		"an A2A JSON-RPC error whose ErrorInfo (domain `a2a-protocol.org`) names an A2A error with another JSON-RPC code (-32001 with `TASK_NOT_CANCELABLE`)",
		"Send the JSON-RPC code of the error the ErrorInfo reason names (TASK_NOT_FOUND -32001, TASK_NOT_CANCELABLE -32002, … VERSION_NOT_SUPPORTED -32009); clients pick the error by either."},
	{FindA2AStatusNotMapped, "003", "Seed 003", "HTTP answers `400` for seven, and gRPC answers `FAILED_PRECONDITION` for six", LevelMust,
		"A2A error with another binding's status",
		"an A2A error named by its ErrorInfo reason whose HTTP status (HTTP+JSON) or gRPC code is not the spec's: TaskNotFound 404 / NOT_FOUND, InvalidAgentResponse 500 / INTERNAL, ContentTypeNotSupported 400 / INVALID_ARGUMENT, the other six 400 / FAILED_PRECONDITION; over JSON-RPC, an HTTP status other than 200 (seed 003: \"A JSON-RPC error is an ordinary response with HTTP `200`.\")",
		"Map each A2A error to the status of the current table (v1.0.1): 404 / NOT_FOUND for TaskNotFound, 500 / INTERNAL for InvalidAgentResponse, 400 / INVALID_ARGUMENT for ContentTypeNotSupported, 400 / FAILED_PRECONDITION for the rest; v1.0.0's 409, 415, 502 and UNIMPLEMENTED are gone. Send JSON-RPC errors with HTTP 200."},
	{FindBadRequestWithoutFields, "003", "Seed 003", "Validation errors carry a different detail type, a `google.rpc.BadRequest` that names the field", LevelMust,
		"BadRequest that names no field",
		"a `google.rpc.BadRequest` detail without field violations, or with a violation whose `field` is empty",
		"Give every BadRequest at least one fieldViolations entry with the field's path (\"message.messageId\") and what is wrong with it, never the submitted value."},
	{FindMessageMissing, "003", "Seed 003", "Every error carries a code, a message, and optional `details`", LevelMust,
		"Error without a message",
		"a JSON-RPC error, google.rpc.Status body or gRPC status (not MCP, not AgentRelay) whose message is missing or empty",
		"Send a short message with every error (\"Task not found\"); clients log and show it, though they must decide on the code and reason."},
	{FindRelayEnvelopeIncomplete, "004", "Seed 004", "All errors from the relay include the following fields", LevelMust,
		"AgentRelay error without code, message, request_id or details",
		"an AgentRelay error (flat REST body, or JSON-RPC `error.message` with `error.data`) without the `code` symbol, a `message`, a `request_id`, or a `details` object (which may be empty)",
		"Send code (the symbol), message, request_id and details ({} when there is nothing to add) in every relay error, in both the flat REST body and JSON-RPC error.data."},
	{FindRelayCodeMismatch, "004", "Seed 004", "The numeric `error.code` is the JSON-RPC code.", LevelMust,
		"AgentRelay JSON-RPC code is not the symbol's",
		"an AgentRelay JSON-RPC error whose `error.code` is not the number seed 004's table gives its `data.code` symbol (`rate_limited` with -32004); a REST status other than the table's is `status_body_mismatch`",
		"Send the JSON-RPC code of the symbol's row (rate_limited -32003, recipient_not_found -32004, internal -32099, …); clients that match on the number take it for another error."},
	{FindRelayInternalNotRedacted, "004", "Seed 004", "Details are redacted.", LevelMust,
		"AgentRelay internal error shows internal details",
		"an AgentRelay `internal` error whose `details` is not empty, or whose message holds a stack frame, a runtime panic, a driver or network error or SQL",
		"Answer internal errors with details {} and a fixed message; keep the cause in the relay's logs under the request_id."},
	{FindRelayIssuesMissing, "004", "Seed 004", "The `details` field includes a zod validation issue list.", LevelMust,
		"AgentRelay invalid_params without its issue list",
		"an AgentRelay `invalid_params` error whose `details` holds no non-empty list of issue objects",
		"Put the validation issues (zod's issues: path, code, message) in details, e.g. details.issues, so that callers see which parameter to fix."},
}

// AllFindings lists every Finding in documentation order (the table's).
var AllFindings = func() []Finding {
	out := make([]Finding, len(Rules))
	for i := range Rules {
		out[i] = Rules[i].Name
	}
	return out
}()

var ruleIndex = func() map[Finding]int {
	m := make(map[Finding]int, len(Rules))
	for i := range Rules {
		m[Rules[i].Name] = i
	}
	return m
}()

// RuleOf returns the row of a finding id; ok is false for an id this build
// does not know (a row written by a newer ingester).
func RuleOf(name Finding) (r *Rule, ok bool) {
	i, ok := ruleIndex[name]
	if !ok {
		return nil, false
	}
	return &Rules[i], true
}
