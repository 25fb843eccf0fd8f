package lookup

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Story is everything errtrail can say about one stored error reply: the
// record, what it means, the attempts around it, the caller's context at
// that moment and the findings for the agent team. Every value in it comes
// from redacted rows; no id the person asked with is echoed back (it may be a
// customer value), only which column it matched.
type Story struct {
	MatchedAs string    `json:"matched_as"` // the id column that matched: error_id, request_id, http_request_id, event_id, message_id, task_id, jsonrpc_id
	Record    Row       `json:"record"`     // the best observer's copy: the agent's own, else a gateway's, else the client's (or the copy FindOptions.EventID picked)
	Observers Observers `json:"observers"`  // who observed the reply, and whether they saw the same thing (observers.go)
	Meaning   Meaning   `json:"meaning"`
	Attempts  Attempts  `json:"attempts"`
	Context   Context   `json:"context"`
	Findings  []Finding `json:"findings"`
	// Group is the id of the reply's error group (groups.Key.ID), for
	// errtrail groups, /v1/agents/{agent}/groups and the groups page.
	Group string `json:"group"`
}

// Row is one stored row of errors as a story shows it: every field of
// docs/record.md, as stored (already redacted). Unknown numbers are null,
// as in `ingest decode`. (parse.Record is the record the decoder makes;
// a Row is what the store holds of it.)
type Row struct {
	EventID          string    `json:"event_id"`
	ObservedAt       time.Time `json:"observed_at"` // millisecond precision, UTC
	IngestedAt       time.Time `json:"ingested_at"`
	KafkaTopic       string    `json:"kafka_topic"`
	KafkaPartition   int32     `json:"kafka_partition"`
	KafkaOffset      int64     `json:"kafka_offset"`
	SourceKind       string    `json:"source_kind"`
	SourceID         string    `json:"source_id,omitempty"`
	SourceVersion    string    `json:"source_version,omitempty"` // the agent's version the event named
	Agent            string    `json:"agent"`
	Endpoint         string    `json:"endpoint,omitempty"`
	Caller           string    `json:"caller,omitempty"`
	Method           string    `json:"method,omitempty"`
	Attempt          int       `json:"attempt,omitempty"`
	HTTPRequestID    string    `json:"http_request_id,omitempty"`
	JSONRPCID        string    `json:"jsonrpc_id,omitempty"`
	MessageID        string    `json:"message_id,omitempty"`
	TaskID           string    `json:"task_id,omitempty"`
	IdempotencyKey   string    `json:"idempotency_key_hash,omitempty"` // the 64-bit keyed hash, hex; never the key
	Protocol         string    `json:"protocol"`
	Binding          string    `json:"binding"`
	Envelope         string    `json:"envelope"`
	HTTPStatus       *int      `json:"http_status"`
	GRPCStatus       string    `json:"grpc_status,omitempty"`
	JSONRPCCode      *int      `json:"jsonrpc_code"`
	Code             string    `json:"code,omitempty"`
	Reason           string    `json:"reason,omitempty"`
	Domain           string    `json:"domain,omitempty"`
	Kind             string    `json:"kind"`
	Typed            bool      `json:"typed"`
	Retryable        *bool     `json:"retryable"`
	RetryableSource  string    `json:"retryable_source,omitempty"`
	RetryAfterMS     *int64    `json:"retry_after_ms"`
	RetryAfterSource string    `json:"retry_after_source,omitempty"`
	Limit            string    `json:"limit,omitempty"`
	Scope            string    `json:"scope,omitempty"`
	ErrorID          string    `json:"error_id,omitempty"`
	RequestID        string    `json:"request_id,omitempty"`
	Message          string    `json:"message,omitempty"`
	FieldViolations  []Field   `json:"field_violations"`
	Findings         []string  `json:"findings"`
	// Since migration 009 (error_traces): the request's W3C trace context,
	// the form the record was decoded from (event, raw, otlp) and the
	// fields the OTLP input inferred from attributes.
	TraceID  string   `json:"trace_id,omitempty"`
	SpanID   string   `json:"span_id,omitempty"`
	Origin   string   `json:"origin,omitempty"`
	Inferred []string `json:"inferred,omitempty"`
}

// Field is one field violation: the field's path and what is wrong with it,
// never the submitted value.
type Field struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}

// Meaning is the record said in plain words, from its typed fields only
// (kind, protocol, code, reason, scope, limit, retry fields), never from the
// message text. Each sentence comes from the one table in meaning.go.
type Meaning struct {
	Headline string   `json:"headline"` // one sentence: what happened
	Details  []string `json:"details"`  // who it affected, what the reply asked for, whether a retry is safe
	Advice   string   `json:"advice"`   // what the caller (the customer) should do
	Text     string   `json:"text"`     // Headline and Details as one paragraph
}

// Attempts are the replies that belong to the same request as the record:
// the same message_id, idempotency key hash or request id, on the same agent.
type Attempts struct {
	Key        string      `json:"key"` // what chains them: message_id, idempotency_key_hash, request_id, http_request_id, or "" when the record has none
	Attempts   []Attempt   `json:"attempts"`
	Violations []string    `json:"violations"` // the retry rules broken, as codes (see RetryRules)
	Truncated  bool        `json:"truncated"`  // more replies than were read
	Rules      []RetryRule `json:"rules"`      // the rules of Violations, with the seed sentence and what happened
}

// Attempt is one reply of the chain, oldest first.
type Attempt struct {
	EventID      string    `json:"event_id"`
	ErrorID      string    `json:"error_id,omitempty"`
	Attempt      int       `json:"attempt"` // as the caller numbered it; 0 when unknown
	ObservedAt   time.Time `json:"observed_at"`
	Kind         string    `json:"kind"`
	Code         string    `json:"code,omitempty"`
	Retryable    *bool     `json:"retryable"`
	AskedDelayMS *int64    `json:"asked_delay_ms"` // the delay this reply asked for
	WaitedMS     *int64    `json:"waited_ms"`      // time from the previous reply to this one; null for the first
	Next         string    `json:"next"`           // "error" (another reply follows) or "none_seen" (no further error seen)
	This         bool      `json:"this"`           // the record the story is about
	Violations   []string  `json:"violations"`     // rules this attempt broke (codes)
	MessageID    string    `json:"message_id,omitempty"`
}

// Context is the caller's situation on the agent at the record's moment.
type Context struct {
	From    time.Time `json:"from"`    // the 15 minutes around the record, whole minutes
	To      time.Time `json:"to"`      // From + 15 minutes, or the story's moment when that is earlier
	Minutes []Minute  `json:"minutes"` // this caller's errors on this agent, per minute: quota, overload and KindOther, for each minute begun before To
	// OtherCallers counts the agent's other named callers with errors of
	// the record's kind in the record's minute (callers_1m; for a kind
	// other than quota and overload, of any kind but those two): four
	// callers limited in the same minute say more than "not overloaded"
	// alone. A count, not a verdict.
	OtherCallers int64 `json:"other_callers"`

	// The alerter's verdicts at the record's moment: read from the
	// incidents it recorded when an alerter was recording then
	// (VerdictSource "incidents": an episode, i.e. a verdict that held its
	// alert's "for", under way at that second), else evaluated afresh on
	// the rollups with the alerter's own code (VerdictSource "recomputed").
	AgentOverloaded bool `json:"agent_overloaded"`
	CallerRunaway   bool `json:"caller_runaway"`
	LimitTooLow     bool `json:"limit_too_low"`
	RetryStorm      bool `json:"retry_storm"`
	// RetryStormChecked says whether RetryStorm was computed: only with
	// Finder.RetryStorms (it costs the alerter's retry read; the attempts
	// already show this request's retries). False: RetryStorm means nothing.
	RetryStormChecked bool      `json:"retry_storm_checked"`
	Undecided         bool      `json:"undecided"` // too little history to judge the caller
	VerdictAt         time.Time `json:"verdict_at"`
	// VerdictSource says where the verdicts come from: VerdictsRecorded or
	// VerdictsRecomputed (no alerter was recording incidents then); empty
	// when they could not be had (VerdictError).
	VerdictSource string `json:"verdict_source,omitempty"`
	VerdictError  string `json:"verdict_error,omitempty"` // the verdicts could not be computed (the rest of the story still holds)
	// RetryStormReasons are the alerter's reasons for RetryStorm
	// (ignored_retry_after, rotated_message_id, rotated_idempotency_key).
	RetryStormReasons []string `json:"retry_storm_reasons,omitempty"`

	verdictsOK bool
}

// SoFar reports whether the minute beginning at m had not ended at To: the
// current minute of a story told while its window was still open, whose
// counts are what was stored by then.
func (c Context) SoFar(m time.Time) bool { return m.Add(time.Minute).After(c.To) }

// Minute is one minute of the context.
type Minute struct {
	Minute time.Time `json:"minute"`
	// ByKind counts the caller's errors of the minute by class: "quota",
	// "overload" and KindOther ("other", every other kind), each only
	// when above 0 (callers_1m counts those three).
	ByKind map[string]int64 `json:"by_kind"`
}

// Finding is one finding of the record, explained for the agent team.
type Finding struct {
	Code  string `json:"code"`
	Title string `json:"title"`
	// Level is "MUST" (the reply breaks a rule: a violation) or "SHOULD"
	// (advice); "" for a finding this build does not know.
	Level  string `json:"level,omitempty"`
	Checks string `json:"checks"` // the seed or spec sentence it checks, quoted, with its source
	Change string `json:"change"` // what the agent team should change
}

// Match is one candidate when an id matches several records.
type Match struct {
	EventID    string    `json:"event_id"`
	ErrorID    string    `json:"error_id,omitempty"`
	MatchedAs  string    `json:"matched_as"`
	Agent      string    `json:"agent"`
	Caller     string    `json:"caller,omitempty"`
	Kind       string    `json:"kind"`
	Code       string    `json:"code,omitempty"`
	ObservedAt time.Time `json:"observed_at"`
	SourceKind string    `json:"source_kind,omitempty"` // who observed it: agent, gateway, client
	SourceID   string    `json:"source_id,omitempty"`
	// Reply numbers the distinct replies of an ambiguous id from 1, newest
	// first: copies of one reply seen by several observers share it. 0 in
	// a list.
	Reply int `json:"reply,omitempty"`
}

// The distinct answers a lookup can give besides a story. Test them with
// errors.Is / errors.As.
var (
	// ErrNotFound: no stored record carries the id.
	ErrNotFound = errors.New("no stored error reply carries this id")
)

// AmbiguousError: the id names several distinct replies (the retries of one
// message, a task id shared by many messages, a JSON-RPC id reused), not
// one reply seen by several observers (that is one story, Story.Observers).
// Matches lists the stored records, a reply's copies together (Match.Reply),
// newest reply first, at most MaxMatches of Total records; Replies counts
// the distinct replies.
type AmbiguousError struct {
	Matches []Match
	Total   int
	Replies int
}

func (e *AmbiguousError) Error() string {
	if e.Replies > 0 && e.Replies != e.Total {
		return fmt.Sprintf("the id names %d distinct error replies (%d stored records, with the copies of other observers); pick one by its event_id", e.Replies, e.Total)
	}
	return fmt.Sprintf("the id matches %d stored error replies; pick one by its event_id", e.Total)
}

// BadIDError: the id cannot be an id errtrail stores (too short, too long,
// control bytes). Reason never quotes the id.
type BadIDError struct{ Reason string }

func (e *BadIDError) Error() string { return "not a usable id: " + e.Reason }

// FindOptions narrows a lookup.
type FindOptions struct {
	// Agent is required for a JSON-RPC id (clients reuse small ids such as
	// 1) and narrows any other id.
	Agent string
	// EventID picks one record among several matches.
	EventID string
}

// Service is what the command line, the HTTP API and the web pages ask.
// *Finder implements it on ClickHouse.
type Service interface {
	Story(ctx context.Context, id string, opt FindOptions) (*Story, error)
	List(ctx context.Context, q ListQuery) (*Page, error)
	Ready(ctx context.Context) error
}

// ListQuery selects stored errors by their dimensions over a bounded range.
type ListQuery struct {
	Agent, Caller, Kind string    // "" matches any
	From, To            time.Time // with a Cursor, zero takes the cursor's
	Limit               int       // 1..MaxListLimit; 0 means DefaultListLimit
	Cursor              string    // from Page.Next
}

// List bounds.
const (
	DefaultListLimit = 50
	MaxListLimit     = 500
	MaxListRange     = 7 * 24 * time.Hour
)

// Page is one page of a list, newest first.
type Page struct {
	Errors []Match   `json:"errors"`
	Next   string    `json:"next,omitempty"` // the cursor of the next page; empty on the last
	From   time.Time `json:"from"`           // the range the list covers, [From, To): the cursor's when one was given
	To     time.Time `json:"to"`
}
