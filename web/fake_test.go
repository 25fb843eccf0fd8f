package web

import (
	"context"
	"sync"
	"time"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// fakeService is a lookup.Service that answers what the test set and
// remembers what it was asked.
type fakeService struct {
	mu       sync.Mutex
	story    *lookup.Story
	storyErr error
	page     *lookup.Page
	listErr  error

	gotID  string
	gotOpt lookup.FindOptions
	gotQ   lookup.ListQuery
	calls  int
}

func (f *fakeService) Story(ctx context.Context, id string, opt lookup.FindOptions) (*lookup.Story, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.gotID, f.gotOpt = id, opt
	if f.storyErr != nil {
		return nil, f.storyErr
	}
	return f.story, nil
}

func (f *fakeService) List(ctx context.Context, q lookup.ListQuery) (*lookup.Page, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.gotQ = q
	if f.listErr != nil {
		return nil, f.listErr
	}
	return f.page, nil
}

func (f *fakeService) Ready(ctx context.Context) error { return nil }

// fakeReporter is a report.Reporter with a fixed answer.
type fakeReporter struct {
	mu       sync.Mutex
	rep      *report.Report
	err      error
	gotAgent string
	gotFrom  time.Time
	gotTo    time.Time
}

func (f *fakeReporter) Report(ctx context.Context, agent string, from, to time.Time) (*report.Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gotAgent, f.gotFrom, f.gotTo = agent, from, to
	if f.err != nil {
		return nil, f.err
	}
	r := *f.rep
	r.Agent, r.From, r.To = agent, from, to
	return &r, nil
}

func ptr[T any](v T) *T { return &v }

// t0 is the moment of the sample record.
var t0 = time.Date(2026, 11, 1, 9, 30, 12, 345_000_000, time.UTC)

// sampleStory is a quota reply of seed 002's worked example with its
// second attempt, which came too early.
func sampleStory() *lookup.Story {
	return &lookup.Story{
		MatchedAs: "error_id",
		Group:     "fedcba9876543210",
		Record: lookup.Row{
			EventID: "run7:2s", ObservedAt: t0, IngestedAt: t0.Add(800 * time.Millisecond),
			KafkaTopic: "errtrail.replies", KafkaPartition: 2, KafkaOffset: 81234,
			SourceKind: "agent", Agent: "research-agent", Endpoint: "https://research.agents.example/a2a",
			Caller: "orchestrator-7", Method: "SendMessage", Attempt: 2,
			HTTPRequestID: "req-http-91", MessageID: "msg-42", TaskID: "task-9", IdempotencyKey: "9f86d081884c7d65",
			Protocol: "a2a", Binding: "http", Envelope: "rpc_status", HTTPStatus: ptr(429), GRPCStatus: "RESOURCE_EXHAUSTED",
			Code: "RATE_LIMIT_EXCEEDED", Reason: "RATE_LIMIT_EXCEEDED", Domain: "research.agents.example",
			Kind: "quota", Typed: true, Retryable: ptr(true), RetryableSource: "default",
			RetryAfterMS: ptr(int64(12000)), RetryAfterSource: "retry_info", Limit: "sendmessage-per-caller", Scope: "caller",
			ErrorID: "err-stored-77", RequestID: "rq-5", Message: "Rate limit exceeded for caller",
			FieldViolations: []lookup.Field{{Field: "message.parts[0]", Description: "too large"}},
			Findings:        []string{"retry_after_header_missing"},
		},
		Meaning: lookup.Meaning{
			Headline: "orchestrator-7 went over its SendMessage limit on research-agent.",
			Details:  []string{"Only this caller is affected; the agent serves everyone else.", "The reply asked to wait 12 s."},
			Advice:   "Wait the delay the reply gives, then retry with the same messageId.",
		},
		Attempts: lookup.Attempts{
			Key: "message_id",
			Attempts: []lookup.Attempt{
				{EventID: "run7:1z", Attempt: 1, ObservedAt: t0.Add(-3 * time.Second), Kind: "quota", Code: "RATE_LIMIT_EXCEEDED",
					Retryable: ptr(true), AskedDelayMS: ptr(int64(12000)), Next: "error", MessageID: "msg-42"},
				{EventID: "run7:2s", Attempt: 2, ObservedAt: t0, Kind: "quota", Code: "RATE_LIMIT_EXCEEDED",
					Retryable: ptr(true), AskedDelayMS: ptr(int64(12000)), WaitedMS: ptr(int64(3000)), Next: "none_seen", This: true,
					Violations: []string{"retry_before_delay"}, MessageID: "msg-42"},
			},
			Violations: []string{"retry_before_delay"},
			Rules:      []lookup.RetryRule{{Code: "retry_before_delay", Checks: `Seed 002: "wait the delay"`, Sentence: "The caller retried after 3 s; the reply asked for 12 s."}},
		},
		Context: lookup.Context{
			From: t0.Truncate(time.Minute).Add(-7 * time.Minute), To: t0.Truncate(time.Minute).Add(8 * time.Minute),
			Minutes: []lookup.Minute{
				{Minute: t0.Truncate(time.Minute), ByKind: map[string]int64{"quota": 20}},
				{Minute: t0.Truncate(time.Minute).Add(-time.Minute), ByKind: map[string]int64{"overload": 1}},
			},
			RetryStorm: true, RetryStormChecked: true, RetryStormReasons: []string{"ignored_retry_after"}, VerdictAt: t0,
		},
		Findings: []lookup.Finding{{
			Code:   "retry_after_header_missing",
			Title:  "429 without Retry-After",
			Checks: `Seed 000: "an HTTP 429 MUST include Retry-After"`,
			Change: "Send Retry-After with every 429.",
		}},
	}
}

func sampleReport() *report.Report {
	return &report.Report{
		Replies: 1200,
		Rules: []report.Rule{{
			Code: "retry_after_header_missing", Title: "429 without Retry-After", Replies: 300, Share: 0.25,
			ExampleEventID: "run7:2s", ExampleErrorID: "err-stored-77", ExampleAgent: "research-agent", ExampleGroup: "0123456789abcdef",
			Checks: `Seed 000: "an HTTP 429 MUST include Retry-After"`, Change: "Send Retry-After with every 429.",
		}},
		Clean:  []string{"retry_delay_zero", "errorinfo_missing"},
		Source: "agent", OtherObservations: 1200,
	}
}
