package parse

// Finding is a stable code for a way in which a reply departs from the spec or
// seed its protocol follows. Findings never change the record's verdict; they
// tell the agent's owner what to fix. Each has one row in Rules (rules.go):
// its sentence, level, title and fix. The ids are stored data: never rename.
type Finding string

const (
	FindRetryDelayMissing        Finding = "retry_delay_missing"
	FindRetryDelayZero           Finding = "retry_delay_zero"
	FindRetryAfterHeaderMissing  Finding = "retry_after_header_missing"
	FindAAPRetryAfterMSMissing   Finding = "aap_retry_after_ms_missing"
	FindErrorInfoMissing         Finding = "errorinfo_missing"
	FindReservedDomain           Finding = "reserved_domain_misuse"
	FindUnassignedA2ACode        Finding = "unassigned_a2a_code"
	FindStatusBodyMismatch       Finding = "status_body_mismatch"
	FindBodyMissing              Finding = "body_missing"
	FindRateLimitNotRetryable    Finding = "rate_limit_not_retryable"
	FindUntyped5xx               Finding = "untyped_5xx"
	FindValidationWithoutFields  Finding = "validation_without_fields"
	FindEchoesSecret             Finding = "echoes_secret"
	FindGRPCDetailsMismatch      Finding = "grpc_details_mismatch"
	FindResourceExhaustedUntyped Finding = "resource_exhausted_untyped"
	FindAAPCodeNotInMetadata     Finding = "aap_code_not_in_metadata"
	FindAAPErrorInfoNotFirst     Finding = "aap_errorinfo_not_first"
	FindDuplicateKey             Finding = "duplicate_key"
	FindActivationHintMissing    Finding = "activation_hint_missing"
	FindAAPRequiredMissing       Finding = "aap_required_member_missing"
	FindAAPUnknownCode           Finding = "aap_unknown_code"
	FindAAPErrorItemIncomplete   Finding = "aap_error_item_incomplete"
	FindAAPReasonNotCode         Finding = "aap_reason_not_code"
	FindAAPDomainWrong           Finding = "aap_domain_not_aap"
	FindAAPMetadataNotString     Finding = "aap_metadata_not_string"
	FindAAPMetadataIncomplete    Finding = "aap_metadata_incomplete"
	FindAAPPayloadNotStruct      Finding = "aap_payload_not_struct"
	FindAAPJSONRPCCodeMismatch   Finding = "aap_jsonrpc_code_mismatch"
	FindEchoesStackTrace         Finding = "echoes_stack_trace"
	FindAAPErrorIDIdentity       Finding = "aap_error_id_exposes_identity"
	FindAAPMCPNotIsError         Finding = "aap_mcp_not_is_error"
	FindAAPMCPContentMismatch    Finding = "aap_mcp_content_mismatch"
	FindAAPMCPProtocolError      Finding = "aap_mcp_protocol_error"
	FindPAPStatusNotMapped       Finding = "pap_status_not_mapped"
	FindPAPBodyNotDirect         Finding = "pap_body_not_direct"
	FindAAPAppointmentConceals   Finding = "aap_appointment_conceals_lead"
	FindRetryDelayDisagree       Finding = "retry_delay_disagree"
	FindQuotaOverloadSwapped     Finding = "quota_overload_swapped"
	FindRetryInfoMissing         Finding = "retry_info_missing"
	FindDebugInfoExposed         Finding = "debug_info_exposed"
	// Seed 003: the A2A error in each binding.
	FindA2ABodyNotStatus        Finding = "a2a_body_not_status"
	FindA2AMediaType            Finding = "a2a_media_type_unaccepted"
	FindStatusCodeNotHTTP       Finding = "status_code_not_http"
	FindStatusNameMismatch      Finding = "status_name_mismatch"
	FindA2AReasonCodeMismatch   Finding = "a2a_reason_code_mismatch"
	FindA2AStatusNotMapped      Finding = "a2a_status_not_mapped"
	FindBadRequestWithoutFields Finding = "bad_request_without_fields"
	FindMessageMissing          Finding = "message_missing"
	// Seed 004: the AgentRelay envelope and code table.
	FindRelayEnvelopeIncomplete  Finding = "relay_envelope_incomplete"
	FindRelayCodeMismatch        Finding = "relay_jsonrpc_code_mismatch"
	FindRelayInternalNotRedacted Finding = "relay_internal_not_redacted"
	FindRelayIssuesMissing       Finding = "relay_issue_list_missing"
)
