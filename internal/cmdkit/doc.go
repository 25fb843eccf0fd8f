// Package cmdkit is what errtrail's commands (cmd/ingest, cmd/alerter,
// cmd/errtrail, cmd/tap, cmd/loadgen) share, so that each main stays thin
// and a flag, a connection or an endpoint means the same in all of them:
//
//   - main.go: Main (a context ended by SIGINT or SIGTERM, the exit
//     status run returns) and Shown/ExitCode (a command line the flag
//     package refused exits 2, --help exits 0).
//   - clickhouse.go: the --clickhouse.* flag group (addresses, database,
//     user, password, TLS) with one set of defaults, its checks, and Open,
//     the one way a command opens a ClickHouse pool (chdial's bounded
//     writes, one dial timeout).
//   - log.go: the --log.level and --log.format flag group and the logger
//     it asks for (cliflags.Logger).
//   - ops.go: the operations endpoints every server has: /healthz (200
//     while the process runs), /readyz (200 while ready, else 503 with the
//     reason) and /metrics (the process's own registry).
//
// A flag group registers on a cliflags.Flags, so the environment
// variables of each command keep their scheme: a command passes the
// prefix of its fixed variables (ingest's ERRTRAIL_CLICKHOUSE_*), or none
// and adds its own afterwards with Flags.Env (the alerter's, the lookup's
// and the tap's). No value of a password flag is ever printed or logged.
//
// It is internal: its users are this module's commands (and api, for the
// ops responses it serves among its routes).
package cmdkit
