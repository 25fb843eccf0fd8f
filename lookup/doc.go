// Package lookup tells the story of one stored error reply, for the support
// engineer who holds an id from a customer ticket and for the agent team that
// sent the reply.
//
// Finder.Story takes any id a customer or agent team may hold — an
// error_id, a request id (HTTP or AgentRelay), an event_id, an A2A
// message_id or task_id, or a JSON-RPC id together with the agent
// (FindOptions.Agent, looked for over the last JSONRPCRange only: clients
// reuse ids such as "1") — and assembles a Story:
//
//   - Record: every stored field (a Row, from schema.ErrorRow), with unknown numbers as
//     null as `ingest decode` prints them (record.go), of the best
//     observer's copy of the reply (the agent's, else a gateway's, else
//     the client's) or of the copy the id named by its event_id;
//   - Observers: every observer that published the reply (agent, gateway,
//     client), compared field by field, and whether they saw the same
//     thing (observers.go, the rule of "one reply": the same non-empty
//     error_id and agent, different observers, within MaxObserverSkew);
//   - Meaning: the record in plain words, from its typed fields only, never
//     from the message text; every sentence is in the one table of
//     meaning.go; of the agent's other callers it says the alerter's
//     overload verdict and how many got the same kind of error in that
//     minute (Context.OtherCallers: quota and overload exactly, the other
//     kinds as one class), nothing more;
//   - Attempts: the other replies of the same request (message_id, else the
//     idempotency key hash, else a request id; same agent, caller and
//     observer), the delays asked for and waited, and the retry rules of the
//     seeds they broke (attempts.go, RetryRules);
//   - Context: the caller's errors per minute around the record
//     (callers_1m: quota, overload and the other kinds together as
//     KindOther), and the alerter's own verdicts at the record's moment
//     (agent overloaded, caller runaway, limit too low, retry storm): the
//     episodes it recorded, read from the incidents table with incidents.At
//     when an alerter was recording in that minute (incidents.go); else
//     computed afresh by Finder.Recompute, an incidents.Recomputer (the
//     commands hand it alerter.Recomputer: the alerter's own Gather
//     restricted to the record's agent and to its counts step, and
//     Evaluate) (context.go), the retry-storm verdict then only with
//     Finder.RetryStorms (the attempts already show this request's
//     retries). Context.VerdictSource says which; without a Recompute
//     such a moment's verdicts are unknown (Context.VerdictError);
//   - Findings: each finding code with the sentence it checks and what the
//     agent team should change (guide.go, GuideFor).
//
// Finder.List pages through the stored errors of a bounded range (its
// cursor holds the range of the first page and is signed, Finder.CursorKey;
// CheckList validates a ListQuery without asking the store), and
// Finder.Ready says whether ClickHouse answers and the tables exist.
//
// What it reads: errtrail's errors, error_lookup, callers_1m, incidents and
// alerter_minutes tables (and, through Finder.Recompute, what the alerter
// reads), named by schema's constants, with parameterized queries
// (clickhouse-go binding) for every value a person supplies. It does not
// import the alerter (deps_test.go): the verdicts come from the incidents
// table or the Recomputer it is handed.
//
// What it guarantees:
//
//   - Read-only: it never writes, and needs only read access.
//   - Redacted: every value in a Story or Page comes from rows that ingest
//     redacted before storing them; the idempotency key is only ever its
//     64-bit keyed hash, as hex.
//   - No id echoed: an id may be a customer value (an e-mail address used
//     as a request id). A Story says which column matched (MatchedAs), never
//     the id; the errors it returns (ErrNotFound, *AmbiguousError for ids
//     that name several distinct replies, *BadIDError, *UnavailableError
//     for an outage, *ConfigError for a store that refuses the
//     configuration, *BadQueryError) never quote it, and a server message
//     that does has the id cut out (store.go).
//   - Bounded: matches (MaxMatches), attempts (MaxAttempts), the context
//     (ContextMinutes) and lists (MaxListRange, MaxListLimit) have limits.
//
// A Finder needs the deployment's Redactor (the key ingest hashed with) to
// find rows whose id was stored as its keyed hash; without one, ids are
// looked up as given only.
package lookup
