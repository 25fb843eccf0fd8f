package report

import (
	"context"
	"time"
)

// Report is the conformance report of one agent (or of every agent) over a
// time range: how many of its error replies break each rule errtrail's
// findings check, with one example to look up, the sentence of the seed or
// spec the rule comes from, and what to change.
type Report struct {
	Agent   string         `json:"agent"` // "" for every agent
	From    time.Time      `json:"from"`
	To      time.Time      `json:"to"`
	Replies int64          `json:"replies"`          // error replies of the agent in the range
	Rules   []Rule         `json:"rules"`            // the rules broken at least once, most broken first
	Clean   []string       `json:"clean"`            // the rules checked and never broken
	Agents  []AgentSummary `json:"agents,omitempty"` // with Agent "": per agent, most findings first
	// Source is the observer whose rows were counted: "agent" (the agent
	// published its own replies), else "gateway", else "client" — see
	// Observer. In the all-agents report each agent has its own, and Source
	// is "mixed" when they differ.
	Source string `json:"source"`
	// OtherObservations counts the rows of other observers of the same
	// agent in the range, left out so that a reply seen by the agent and by
	// a gateway in front of it is counted once.
	OtherObservations int64 `json:"other_observations"`
	// Over is the same counts per hour or day of the range (see Over);
	// nil from a Reporter that does not count them.
	Over *Over `json:"over,omitempty"`
}

// Rule is one rule the agent's replies break.
type Rule struct {
	Code  string `json:"code"` // the finding code (parse.Finding)
	Title string `json:"title"`
	// Level is the rule's level (parse.Rules): "MUST", a violation, or
	// "SHOULD", advice; "" for a code this build does not know.
	Level          string  `json:"level,omitempty"`
	Replies        int64   `json:"replies"` // replies that break it
	Share          float64 `json:"share"`   // of the agent's error replies
	ExampleEventID string  `json:"example_event_id"`
	ExampleErrorID string  `json:"example_error_id,omitempty"`
	// ExampleAgent and ExampleGroup are the example's agent and error
	// group id (groups.Key.ID), for errtrail groups and the groups page;
	// empty when its row has left errors.
	ExampleAgent string `json:"example_agent,omitempty"`
	ExampleGroup string `json:"example_group,omitempty"`
	exampleAt    int64  // the example's hour (rollup) or second (errors)
	Checks       string `json:"checks"` // the seed or spec sentence
	Change       string `json:"change"` // the fix
}

// AgentSummary is one agent's line of the all-agents report.
type AgentSummary struct {
	Agent    string `json:"agent"`
	Replies  int64  `json:"replies"`
	Breaking int64  `json:"breaking"` // replies with at least one finding
	Rules    int    `json:"rules"`    // distinct rules broken
	Source   string `json:"source"`   // the observer counted (see Report.Source)
	// OtherObservations: rows of other observers left out (see Report).
	OtherObservations int64 `json:"other_observations"`
}

// Reporter builds reports. *ClickHouse implements it.
type Reporter interface {
	Report(ctx context.Context, agent string, from, to time.Time) (*Report, error)
}

// MaxRange bounds a report's time range.
const MaxRange = 31 * 24 * time.Hour
