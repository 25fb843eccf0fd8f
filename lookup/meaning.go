package lookup

import (
	"strconv"
	"strings"
)

// The meaning of a record is said by one table of sentences, keyed by kind
// and protocol. A row with Protocol "" is the kind's default; a row for a
// protocol overrides only the sentences it sets, and the row of kind "*"
// holds the sentences every kind shares. Sentences are templates over the
// record's typed fields only (kind, protocol, code, reason, scope, limit,
// retry fields, caller, agent, method, status, field paths) and the
// verdicts of the context; the message text is never read, so nothing a
// reply says in words can reach a meaning.
//
// Placeholders: {caller} {agent} {method} {code} {limit} {delay} {wait}
// {reply} {fields} {kind}, and in Others {others} ("1 other caller was",
// "4 other callers were").
type meaningRow struct {
	Kind, Protocol string

	Headline string
	// The health of the agent at the record's moment, from the alerter's
	// overload verdict: not overloaded, overloaded, or not known.
	Healthy, Overloaded, HealthUnknown string
	// What the rollup says about the agent's other callers in the record's
	// minute: how many got an error of the same kind (Others), or none
	// (NoOthers). Counts, not a verdict: said only as counts.
	Others, NoOthers string
	// What the reply asked for: a delay, or none.
	Wait, NoWait string
	// Whether a retry is safe: retryable true, false, or not said.
	RetrySafe, RetryUnsafe, RetryUnknown string
	// Fields is said when the reply named invalid fields.
	Fields string
	Advice string
}

var meaningTable = []meaningRow{
	{
		Kind:    "*",
		Healthy: "At that moment the alerter did not find {agent} overloaded for its other callers.",
		// callers_1m counts quota and overload apart and every other kind
		// together, so for those kinds the count is of that whole class.
		Others:        "{others} also answered with errors other than quota or overload by {agent} in that minute.",
		NoOthers:      "No other caller got errors other than quota or overload from {agent} in that minute.",
		Overloaded:    "At that moment {agent} was overloaded for every caller, which may be the real cause.",
		HealthUnknown: "Whether {agent} was failing for everyone else at that moment is unknown.",
		Wait:          "The reply told the caller to wait {delay}.",
		NoWait:        "The reply gave no delay to wait.",
		RetrySafe:     "The reply marks it retryable.",
		RetryUnsafe:   "The reply marks it not retryable: sending the same request again cannot help.",
		RetryUnknown:  "The reply does not say whether a retry can help.",
		Fields:        "The reply names the fields: {fields}.",
		Advice:        "Read the findings below and the record's code before retrying.",
	},
	{
		Kind:          "quota",
		Headline:      "Quota: caller {caller} went over {agent}'s {limit}.",
		Healthy:       "The alerter found no overload of {agent} at that moment.",
		Others:        "{others} also rejected for quota by {agent} in that minute.",
		NoOthers:      "No other caller was rejected for quota by {agent} in that minute.",
		Overloaded:    "The agent was also overloaded for every caller at that moment, so the rejection may not be this caller's alone.",
		HealthUnknown: "Whether {agent} was overloaded at that moment is unknown: the alerter's verdict could not be computed.",
		RetrySafe:     "A retry after the delay is safe because the rejection happened at admission.",
		RetryUnsafe:   "The reply marks it not retryable, which a rate limit should not be (see the findings).",
		RetryUnknown:  "The reply does not say whether it is retryable; a rate-limit rejection is decided at admission, so a retry after the delay is normally safe.",
		Advice:        "Wait {wait} before retrying with the same messageId, and send fewer requests: the limit is this caller's own.",
	},
	{
		Kind:     "quota",
		Protocol: "aap",
		Headline: "Rate limited: caller {caller} exceeded {agent}'s {limit} (AAP {code}).",
		Advice:   "Wait {wait} before retrying with the same payload and idempotency key, and send fewer requests.",
	},
	{
		Kind:     "quota",
		Protocol: "agentrelay",
		Headline: "Rate limited: the relay {agent} rejected caller {caller} for exceeding its rate limit ({code}).",
		Advice:   "Wait {wait}, as Retry-After says, then retry with the same client_idempotency_key.",
	},
	{
		Kind:          "overload",
		Headline:      "Overload: {agent} could not serve caller {caller}; the reply blames the agent's capacity, not this caller's usage.",
		Healthy:       "The alerter did not find the agent overloaded for its other callers at that moment: the failure was brief or limited to some callers.",
		Overloaded:    "The agent was failing for everyone at that moment (the alerter's overload verdict).",
		HealthUnknown: "Whether the agent was failing for everyone at that moment is unknown.",
		Others:        "{others} also answered with overload errors by {agent} in that minute.",
		NoOthers:      "No other caller got overload errors from {agent} in that minute.",
		Advice:        "Wait {wait} and retry with backoff, or use another agent or a degraded path; this is not the caller's fault.",
	},
	{
		Kind:     "invalid",
		Headline: "Invalid request: {agent} refused the {method} request of caller {caller} as malformed or incomplete ({code}).",
		Advice:   "Fix the request before sending it again; repeating the same input cannot help.",
	},
	{
		Kind:     "invalid",
		Protocol: "aap",
		Headline: "Invalid request: {agent} rejected the skill request of caller {caller} with AAP {code}.",
		Advice:   "Correct every field the reply lists and send a deliberately changed request; an identical retry cannot help.",
	},
	{
		Kind:     "auth",
		Headline: "Authentication or authorization: {agent} refused caller {caller} ({code}).",
		Advice:   "Get a fresh credential or the missing permission, then retry; the same credential will be refused again.",
	},
	{
		Kind:     "not_found",
		Headline: "Not found: what caller {caller} named does not exist on {agent}, or is hidden from it ({code}).",
		Advice:   "Do not retry unchanged: check the id the request named.",
	},
	{
		Kind:     "not_found",
		Protocol: "a2a",
		Headline: "Not found: {agent} does not know the task or resource that caller {caller} named ({code}).",
		Advice:   "Stop retrying: the id is wrong, purged or hidden from this caller; read the task again with GetTask or start a new one.",
	},
	{
		Kind:     "not_found",
		Protocol: "agentrelay",
		Headline: "Not found: the relay {agent} has no recipient or thread by the name caller {caller} used ({code}).",
		Advice:   "Check the recipient handle or thread id; retrying unchanged fails again.",
	},
	{
		Kind:     "conflict",
		Headline: "Conflict: the request of caller {caller} clashed with the current state on {agent} ({code}).",
		Advice:   "Read the current state and reconcile before deciding to retry; do not rotate the messageId or idempotency key to get past it.",
	},
	{
		Kind:     "unsupported",
		Headline: "Unsupported: {agent} does not support what caller {caller} asked for ({code}).",
		Advice:   "Read the agent card again (capabilities, versions, extensions) before sending something the agent advertises.",
	},
	{
		Kind:     "unsupported",
		Protocol: "mcp",
		Headline: "Unsupported: the MCP server {agent} does not offer the method or tool caller {caller} asked for ({code}).",
		Advice:   "List the server's tools and capabilities again before calling.",
	},
	{
		Kind:     "internal",
		Headline: "Internal error: {agent} failed while serving caller {caller} ({code}).",
		Advice:   "Retry with bounded backoff; if it persists, give the agent team the error id.",
	},
	{
		Kind:     "internal",
		Protocol: "mcp",
		Headline: "Tool error: a tool of the MCP server {agent} failed for caller {caller} ({code}).",
		Advice:   "Do not treat the HTTP 200 as success; retry only if the tool's error says it is transient, and give the agent team the error id.",
	},
	{
		Kind:     "unknown",
		Headline: "Unclassified error: {agent} answered caller {caller} with {reply} and nothing typed that tells a quota from a crash.",
		Advice:   "Retry cautiously with backoff; ask the agent team to send a typed reason (see the findings).",
	},
}

// health is what the context says about the agent at the record's moment.
type health int8

const (
	healthUnknown health = iota
	healthOK
	healthOverloaded
)

// meaningOf says the record in plain words. others is the number of the
// agent's other callers with errors of the record's kind in its minute
// (Context.OtherCallers), or below 0 when not counted.
func meaningOf(r *Row, h health, others int64) Meaning {
	row := rowFor(r.Kind, r.Protocol)
	fill := placeholders(r, others)
	var m Meaning
	m.Headline = fill.Replace(row.Headline)
	switch h {
	case healthOK:
		m.Details = append(m.Details, fill.Replace(row.Healthy))
	case healthOverloaded:
		m.Details = append(m.Details, fill.Replace(row.Overloaded))
	default:
		m.Details = append(m.Details, fill.Replace(row.HealthUnknown))
	}
	switch {
	case others > 0:
		m.Details = append(m.Details, fill.Replace(row.Others))
	case others == 0:
		m.Details = append(m.Details, fill.Replace(row.NoOthers))
	}
	if r.RetryAfterMS != nil {
		m.Details = append(m.Details, fill.Replace(row.Wait))
	} else {
		m.Details = append(m.Details, fill.Replace(row.NoWait))
	}
	switch {
	case r.Retryable == nil:
		m.Details = append(m.Details, fill.Replace(row.RetryUnknown))
	case *r.Retryable:
		m.Details = append(m.Details, fill.Replace(row.RetrySafe))
	default:
		m.Details = append(m.Details, fill.Replace(row.RetryUnsafe))
	}
	if len(r.FieldViolations) > 0 {
		m.Details = append(m.Details, fill.Replace(row.Fields))
	}
	m.Advice = fill.Replace(row.Advice)
	m.Text = strings.Join(append([]string{m.Headline}, m.Details...), " ")
	return m
}

// rowFor merges the rows of (kind, protocol), (kind, "") and ("*", ""),
// sentence by sentence. An unknown kind is said as "unknown".
func rowFor(kind, protocol string) meaningRow {
	find := func(k, p string) *meaningRow {
		for i := range meaningTable {
			if meaningTable[i].Kind == k && meaningTable[i].Protocol == p {
				return &meaningTable[i]
			}
		}
		return nil
	}
	if find(kind, "") == nil {
		kind = "unknown"
	}
	var out meaningRow
	for _, r := range []*meaningRow{find(kind, protocol), find(kind, ""), find("*", "")} {
		if r == nil {
			continue
		}
		for _, p := range [...][2]*string{
			{&out.Headline, &r.Headline}, {&out.Healthy, &r.Healthy}, {&out.Overloaded, &r.Overloaded},
			{&out.HealthUnknown, &r.HealthUnknown}, {&out.Others, &r.Others}, {&out.NoOthers, &r.NoOthers},
			{&out.Wait, &r.Wait}, {&out.NoWait, &r.NoWait},
			{&out.RetrySafe, &r.RetrySafe}, {&out.RetryUnsafe, &r.RetryUnsafe}, {&out.RetryUnknown, &r.RetryUnknown},
			{&out.Fields, &r.Fields}, {&out.Advice, &r.Advice},
		} {
			if *p[0] == "" {
				*p[0] = *p[1]
			}
		}
	}
	out.Kind, out.Protocol = kind, protocol
	return out
}

// placeholders fills the templates from the record's typed fields. Every
// value is an identifier as stored (already redacted) or a number; the
// message and the violation descriptions are never used.
func placeholders(r *Row, others int64) *strings.Replacer {
	or := func(v, dflt string) string {
		if v == "" {
			return dflt
		}
		return v
	}
	code := "no code given"
	switch {
	case r.Code != "":
		code = "code " + r.Code
	case r.Reason != "":
		code = "reason " + r.Reason
	}
	limit := "rate limit (the reply did not name it)"
	if r.Limit != "" {
		limit = `limit "` + r.Limit + `"`
	}
	if r.Scope != "" && r.Scope != "caller" {
		limit += " (scope " + r.Scope + ")"
	}
	delay, wait := "", "with a jittered backoff (the reply gave no delay)"
	if r.RetryAfterMS != nil {
		delay = formatDelay(*r.RetryAfterMS)
		wait = "at least the " + delay + " the reply asked for"
	}
	var fields []string
	for i, f := range r.FieldViolations {
		if i == 5 {
			fields = append(fields, "and "+strconv.Itoa(len(r.FieldViolations)-5)+" more")
			break
		}
		fields = append(fields, f.Field)
	}
	return strings.NewReplacer(
		"{caller}", or(r.Caller, "(no caller named)"),
		"{agent}", or(r.Agent, "the agent"),
		"{method}", or(r.Method, "unnamed"),
		"{code}", code,
		"{limit}", limit,
		"{delay}", delay,
		"{wait}", wait,
		"{reply}", replyForm(r),
		"{fields}", strings.Join(fields, ", "),
		"{kind}", or(r.Kind, "unknown"),
		"{others}", othersWords(others),
	)
}

// othersWords is {others}: "1 other caller was", "4 other callers were".
func othersWords(n int64) string {
	if n == 1 {
		return "1 other caller was"
	}
	return strconv.FormatInt(n, 10) + " other callers were"
}

// replyForm names how the reply arrived: "HTTP 502", "gRPC UNKNOWN",
// "JSON-RPC -32603".
func replyForm(r *Row) string {
	var parts []string
	if r.HTTPStatus != nil {
		parts = append(parts, "HTTP "+strconv.Itoa(*r.HTTPStatus))
	}
	if r.GRPCStatus != "" {
		parts = append(parts, "gRPC "+r.GRPCStatus)
	}
	if r.JSONRPCCode != nil {
		parts = append(parts, "JSON-RPC "+strconv.Itoa(*r.JSONRPCCode))
	}
	if len(parts) == 0 {
		return "an error"
	}
	return strings.Join(parts, " / ")
}

// formatDelay writes a delay for people: "250 ms", "12 s", "1.5 s", "2 min 30 s".
func formatDelay(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + " ms"
	case ms < 60_000:
		if ms%1000 == 0 {
			return strconv.FormatInt(ms/1000, 10) + " s"
		}
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + " s"
	case ms < 3_600_000:
		m, s := ms/60_000, (ms%60_000)/1000
		if s == 0 {
			return strconv.FormatInt(m, 10) + " min"
		}
		return strconv.FormatInt(m, 10) + " min " + strconv.FormatInt(s, 10) + " s"
	default:
		h, m := ms/3_600_000, (ms%3_600_000)/60_000
		if m == 0 {
			return strconv.FormatInt(h, 10) + " h"
		}
		return strconv.FormatInt(h, 10) + " h " + strconv.FormatInt(m, 10) + " min"
	}
}
