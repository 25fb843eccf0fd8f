package lookup

// Guide explains one finding (parse.Finding) to the agent team: a short
// title, the seed or spec sentence it checks, and what to change.
type Guide struct {
	Title  string
	Checks string
	Change string
}

// guides holds one row per finding code. Checks is the sentence of
// docs/record.md's Findings table, word for word (a test compares them);
// Change is addressed to the team that owns the agent.
var guides = map[string]Guide{
	"retry_delay_missing": {
		Title:  "A rate limit without a delay",
		Checks: `Seed 002: "Send that delay explicitly rather than making every client guess"`,
		Change: "Put the time until the limiter admits this caller again in every quota rejection: google.rpc.RetryInfo retryDelay in the details and Retry-After in seconds on HTTP (AAP: details.retry_after_ms), computed from the limiter's state.",
	},
	"retry_delay_zero": {
		Title:  "A rate limit that asks for no wait",
		Checks: `Seed 002: "Round the delay up to whole seconds, and never send zero"`,
		Change: "Round the delay up to at least one whole second; a zero delay invites an immediate retry that is rejected again.",
	},
	"retry_after_header_missing": {
		Title:  "HTTP 429 without Retry-After",
		Checks: "Seed 000: \"an HTTP 429 MUST include `Retry-After`\"",
		Change: "Send a Retry-After header (seconds) with every 429, repeating the delay of the body for clients and proxies that never read bodies.",
	},
	"aap_retry_after_ms_missing": {
		Title:  "AAP RATE_LIMITED without retry_after_ms",
		Checks: "Seed 000: \"A typed `RATE_LIMITED` MUST include `details.retry_after_ms`\"",
		Change: "Add details.retry_after_ms to the aap.error payload of every RATE_LIMITED reply.",
	},
	"errorinfo_missing": {
		Title:  "A2A error without ErrorInfo",
		Checks: "A2A §10.6/§11.6: an A2A error MUST carry a `google.rpc.ErrorInfo` in details",
		Change: "Add a google.rpc.ErrorInfo detail with the error's reason and your domain to every HTTP+JSON and gRPC error, so clients decide on the reason rather than the status.",
	},
	"reserved_domain_misuse": {
		Title:  "Own reason in the a2a-protocol.org domain",
		Checks: `Seed 002: "the a2a-protocol.org domain is reserved for A2A's own errors"`,
		Change: "Use your own domain (for example agents.example.com) in ErrorInfo for reasons that are not A2A errors; keep a2a-protocol.org for the nine A2A errors.",
	},
	"unassigned_a2a_code": {
		Title:  "Unassigned A2A JSON-RPC code",
		Checks: `Seed 002: "codes -32010 and above are unassigned and a later revision may take them"`,
		Change: "Do not invent A2A codes: use a standard code (-32603 for a rate limit, as the spec's example) and put the meaning in typed error.data details.",
	},
	"status_body_mismatch": {
		Title:  "HTTP status and body disagree",
		Checks: `Seed 002: "Gateways sometimes strip bodies or rewrite 429 to 502"`,
		Change: "Make the HTTP status match the status the body states, and check every gateway and proxy in front of the agent: send a rejection end to end in staging and assert the status, reason and delay arrive unchanged.",
	},
	"body_missing": {
		Title:  "Error reply without a body",
		Checks: `Seed 002: "Send a rejection end to end … and assert the reason and delay arrive"`,
		Change: "Return the error body (JSON-RPC error, google.rpc.Status or aap.error) with every 4xx and 5xx; if the agent does, find the gateway that strips it.",
	},
	"rate_limit_not_retryable": {
		Title:  "Rate limit marked not retryable",
		Checks: "Seed 000: `RATE_LIMITED` is retryable by default; seed 002: \"the retry is safe\"",
		Change: "Mark rate-limit rejections retryable (they are decided at admission, before any side effect), or use a code that is not a rate limit if the caller must not retry.",
	},
	"untyped_5xx": {
		Title:  "Bare server error",
		Checks: `Seed 002: "Against an agent that returns a bare 500, the client cannot tell a quota from a crash"`,
		Change: "Return a typed reason with every server error: ErrorInfo (or an aap.error, an AgentRelay symbol) that says whether it is a quota, an overload or a crash; a quota should be 429 / RESOURCE_EXHAUSTED, an overload 503 / UNAVAILABLE.",
	},
	"validation_without_fields": {
		Title:  "Validation error that names no field",
		Checks: "Seed 000: \"Validation errors MUST list every currently detectable problem in `details.errors[]`\"",
		Change: "List every invalid field with its location and the constraint it breaks (AAP details.errors[] with instanceLocation and keyword, or google.rpc.BadRequest fieldViolations), never the submitted value.",
	},
	"echoes_secret": {
		Title:  "Reply echoes a secret or customer value",
		Checks: `Seed 000: "Never echo customer values, credentials or internal stack traces"`,
		Change: "Remove credentials, tokens and customer values (e-mail addresses, phone numbers) from error messages and field descriptions; name the field instead of quoting what was sent.",
	},
	"grpc_details_mismatch": {
		Title:  "gRPC details disagree with grpc-status",
		Checks: "REFERENCE §3c: a details code that differs from `grpc-status` must not be trusted",
		Change: "Send a grpc-status-details-bin whose google.rpc.Status code equals grpc-status, and make sure it parses; clients ignore details that contradict the status.",
	},
	"resource_exhausted_untyped": {
		Title:  "RESOURCE_EXHAUSTED without a limiter reason",
		Checks: `Seed 002: "A client must not treat every RESOURCE_EXHAUSTED as a rate limit"`,
		Change: "When your limiter rejects a call with RESOURCE_EXHAUSTED, add the ErrorInfo reason (e.g. RATE_LIMIT_EXCEEDED in your domain) and RetryInfo; without them clients must treat it as gRPC's local, non-retryable error.",
	},
	"aap_code_not_in_metadata": {
		Title:  "AAP code missing from ErrorInfo metadata",
		Checks: "Seed 000: \"Duplicate the code in metadata for SDKs that omit `reason`\"",
		Change: "Copy the AAP code into the ErrorInfo metadata key \"code\" (with error_id, retryable and created_at).",
	},
	"aap_errorinfo_not_first": {
		Title:  "AAP ErrorInfo not first",
		Checks: "Seed 000: \"standard `ErrorInfo` first in `error.data[]`\"",
		Change: "Put the google.rpc.ErrorInfo first in error.data[], before the aap.error Struct and any other detail.",
	},
	"duplicate_key": {
		Title:  "A member appears twice in the body",
		Checks: "Readers disagree on which copy wins",
		Change: "Emit each member of the error object once; the serializer or a middleware that merges objects is writing it twice.",
	},
	"activation_hint_missing": {
		Title:  "Activation error without its recovery hint",
		Checks: "Seed 000: \"An activation error MUST name both the exact required extension URI and `A2A-Extensions` in its message\"",
		Change: "Name the exact extension URI and the A2A-Extensions header in the message of EXTENSION_SUPPORT_REQUIRED, and set the ErrorInfo metadata extensionUri and requiredHeader.",
	},
	"debug_info_exposed": {
		Title:  "Stack trace sent to the caller",
		Checks: "Seed 000: never echo \"internal stack traces\"",
		Change: "Drop google.rpc.DebugInfo (stack entries, internal detail) from replies to callers; log it on the agent's side with the error id instead.",
	},
}

// GuideFor returns the guide of a finding code; ok is false for a code this
// build does not know (a row written by a newer ingester).
func GuideFor(code string) (g Guide, ok bool) {
	g, ok = guides[code]
	return g, ok
}

// findingsOf explains the record's finding codes, in the record's order.
func findingsOf(codes []string) []Finding {
	out := make([]Finding, 0, len(codes))
	for _, c := range codes {
		g, ok := GuideFor(c)
		if !ok {
			g = Guide{Title: "A finding this build does not know",
				Change: "Look the code up in docs/record.md of the errtrail release that stored the row."}
		}
		out = append(out, Finding{Code: c, Title: g.Title, Checks: g.Checks, Change: g.Change})
	}
	return out
}
