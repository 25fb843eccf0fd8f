// Package report builds the conformance report of an agent: which rules of
// its protocol its error replies break, how often, and what to change.
//
// A rule is a parse.Finding, one row of parse.Rules; each Rule carries the
// row's level: a broken MUST is a violation, a broken SHOULD is advice. For one agent (or every agent) and a range
// [from, to) of at most MaxRange, a Report counts the agent's error replies,
// and for each rule broken at least once the replies that break it, their
// share, one example reply (event_id, and error_id when one of them has one)
// and the finding's guide from lookup.GuideFor (title, the seed or spec
// sentence it checks, the fix; the code stands in as title for a finding
// the guide does not know yet). Clean lists the rules of parse.AllFindings
// never broken in the range.
//
// Counting a reply once. The same request can be published by the agent,
// by a gateway in front of it and by the client, as rows with different
// event_ids and nothing that joins them. The report is about what the agent
// sent, so for each agent it counts the rows of one observer kind: its own
// (source_kind "agent") when it has any in the range, else the gateway's,
// else the client's (Observer). The rows of the other kinds are left out and
// counted in OtherObservations; Report.Source and AgentSummary.Source say
// which kind was counted.
//
// Where the numbers come from. *ClickHouse reads whole hours from the
// findings_1h rollup (schema migration 006) and the partial hours at either
// end, and any hour before the rollup existed, from errors. A re-sent copy
// of an event that the ingester did not drop counts once in hours read from
// errors and twice in hours read from findings_1h, like every rollup.
//
// Errors. *BadRangeError for a range the report refuses (HTTP 400);
// ErrUnknownAgent for an agent errtrail holds no row of (HTTP 404);
// *schema.UnavailableError when ClickHouse cannot answer (HTTP 503);
// *schema.ConfigError when it refuses the configuration (unknown database,
// table or user, wrong password: not worth a retry).
package report
