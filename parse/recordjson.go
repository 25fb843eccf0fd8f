package parse

import "encoding/json"

// recordJSON is the JSON form of a Record printed by `ingest decode` and kept
// in golden files. Absent values are null, so a consumer can tell "no delay
// given" from "zero".
type recordJSON struct {
	Protocol         Protocol         `json:"protocol"`
	Binding          Binding          `json:"binding"`
	Envelope         Envelope         `json:"envelope"`
	HTTPStatus       *int             `json:"http_status"`
	GRPCStatus       *string          `json:"grpc_status"`
	JSONRPCCode      *int             `json:"jsonrpc_code"`
	Code             string           `json:"code"`
	Reason           string           `json:"reason"`
	Domain           string           `json:"domain"`
	Kind             Kind             `json:"kind"`
	Typed            bool             `json:"typed"`
	Retryable        *bool            `json:"retryable"`
	RetryableSource  Source           `json:"retryable_source"`
	RetryAfterMS     *int64           `json:"retry_after_ms"`
	RetryAfterSource Source           `json:"retry_after_source"`
	Limit            string           `json:"limit"`
	Scope            string           `json:"scope"`
	Caller           string           `json:"caller"`
	Method           string           `json:"method"`
	Agent            string           `json:"agent"`
	ErrorID          string           `json:"error_id"`
	RequestID        string           `json:"request_id"`
	TaskID           string           `json:"task_id"`
	MessageID        string           `json:"message_id"`
	Message          string           `json:"message"`
	FieldViolations  []FieldViolation `json:"field_violations"`
	Findings         []Finding        `json:"findings"`
	EventID          string           `json:"event_id,omitempty"`
	ObservedAtMS     int64            `json:"observed_at,omitempty"`
	SourceKind       string           `json:"source_kind,omitempty"`
	SourceVersion    string           `json:"source_version,omitempty"`
	Endpoint         string           `json:"endpoint,omitempty"`
	HTTPRequestID    string           `json:"http_request_id,omitempty"`
	Attempt          int              `json:"attempt,omitempty"`
	TraceID          string           `json:"trace_id,omitempty"`
	SpanID           string           `json:"span_id,omitempty"`
	Origin           Origin           `json:"origin,omitempty"`
	Inferred         []string         `json:"inferred,omitempty"`
}

// MarshalJSON renders the record with the keys documented in docs/record.md.
func (r *Record) MarshalJSON() ([]byte, error) {
	j := recordJSON{
		Protocol: r.Protocol, Binding: r.Binding, Envelope: r.Envelope,
		Code: r.Code, Reason: r.Reason, Domain: r.Domain, Kind: r.Kind, Typed: r.Typed,
		RetryableSource: r.RetryableSource, RetryAfterSource: r.RetryAfterSource,
		Limit: r.Limit, Scope: r.Scope, Caller: r.Caller, Method: r.Method, Agent: r.Agent,
		ErrorID: r.ErrorID, RequestID: r.RequestID, TaskID: r.TaskID, MessageID: r.MessageID,
		Message: r.Message, FieldViolations: r.FieldViolations, Findings: r.Findings,
		EventID: r.EventID, ObservedAtMS: r.ObservedAtMS, SourceKind: r.SourceKind, SourceVersion: r.SourceVersion, Endpoint: r.Endpoint,
		HTTPRequestID: r.HTTPRequestID, Attempt: r.Attempt,
		TraceID: r.TraceID, SpanID: r.SpanID, Inferred: r.Inferred,
	}
	if r.Origin == OriginOTLP {
		// Event JSON and the raw forms are what `ingest decode` has always
		// read; a record inferred from OpenTelemetry says so.
		j.Origin = r.Origin
	}
	if j.FieldViolations == nil {
		j.FieldViolations = []FieldViolation{}
	}
	if j.Findings == nil {
		j.Findings = []Finding{}
	}
	if r.HTTPStatus != 0 {
		v := r.HTTPStatus
		j.HTTPStatus = &v
	}
	if s := r.GRPCStatusName(); s != "" {
		j.GRPCStatus = &s
	}
	if r.HasJSONRPC {
		v := r.JSONRPCCode
		j.JSONRPCCode = &v
	}
	if r.Retryable != TriUnknown {
		v := r.Retryable == TriTrue
		j.Retryable = &v
	}
	if r.RetryAfterMS >= 0 {
		v := r.RetryAfterMS
		j.RetryAfterMS = &v
	}
	return json.Marshal(j)
}
