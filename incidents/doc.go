// Package incidents reads the alerter's verdicts remembered as episodes: the
// rows of the incidents table (docs/schema.md, "incidents"), which the
// alerter writes as it evaluates (alerter/incidents.go) and which errtrail
// incidents, /v1/incidents and the support story read.
//
// An episode is one verdict (Kind) about one agent, or one caller of it,
// for one reason, from the evaluation that first found it (Start) to the
// first evaluation that no longer did (End, zero while open). It is opened
// only once the verdict has held as long as its alert's "for" in
// alerts/verdicts.yml, so an episode is an alert that fired, and it is
// dated from the verdict's first evaluation. Where the alert keeps firing
// after its verdict clears (keep_firing_for: the overload page, 10 s), the
// episode ends only once the verdict has not been found for that long, and
// a verdict back before then goes on in the same episode.
//
// The package holds the row's Go form (Incident), reads episodes (Read) and
// stores the writes the alerter decides (Write), so that the read side
// (lookup/, api/, cmd/errtrail) never imports alerter/.
// Every read takes each episode's latest write (argMax by version), so it
// is right before ClickHouse has merged the rewrites.
package incidents
