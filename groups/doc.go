// Package groups reads error groups: one kind of failure of one agent,
// identified by the fingerprint (agent, protocol, code or reason, kind,
// method) (docs/record.md, "Error groups"). The reads answer from the
// rollups error_groups (one row per group and agent version: count, first
// and last seen, distinct callers, one example id) and error_groups_1h
// (errors per group and hour) that migration 008 fills from landing; they
// never scan errors.
//
// A group's State says what is news about it at a moment now:
//   - new: first seen in the hour before now, on an agent whose first
//     error (any group) is at least an hour older than that (so nothing is
//     new while an agent's history, or a fresh database, is younger than an
//     hour);
//   - regression: seen in the hour before now after 24 hours or more
//     without a single error of it, or first seen with an agent version
//     newer than every version it was seen with before, after the agent ran
//     a newer version without it for an hour (the newer version had fixed
//     it). Versions compare as versions (CompareVersions), so an old
//     release still raising an old group is never a regression.
//
// Quota groups (kind quota: a caller over its own limit, the limiter
// working) are groups like the others but never new and never a
// regression.
//
// The package holds the Go form (Group), the reads (Read, NewSince), the
// classification (Classify) and the version order; alerter/ computes the
// ErrtrailNewErrorGroup ticket from NewSince, and errtrail groups,
// /v1/agents/{agent}/groups and the groups page read with Read.
package groups
