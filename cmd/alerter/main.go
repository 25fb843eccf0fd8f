// Command alerter evaluates errtrail's verdicts (agent overloaded, runaway
// caller, limit too low, retry storm, gateway mangling, untyped errors) from
// ClickHouse on a fixed interval and exports them as Prometheus metrics for
// the rules in alerts/. See docs/alerting.md.
//
// Every flag can also be set from the environment: --foo.bar-baz reads
// ERRTRAIL_ALERTER_FOO_BAR_BAZ when the flag is not given, and the
// --clickhouse.* and --log.* flags, which ingest has too, then read
// ingest's variable (ERRTRAIL_CLICKHOUSE_ADDR, ERRTRAIL_CLICKHOUSE_PASSWORD,
// ERRTRAIL_LOG_FORMAT, ...). flags.go reads the settings, server.go runs.
package main

import (
	"context"
	"io"

	"github.com/errtrail/errtrail/internal/cmdkit"
)

func main() {
	cmdkit.Main(func(ctx context.Context, args []string, _, stderr io.Writer) int { return run(ctx, args, stderr) })
}

// run reads the settings and serves until ctx ends. It returns the exit
// status: 0 after a clean stop or --help, 1 when serving failed, 2 for bad
// flags or settings.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if code, ok := cmdkit.ExitCode("alerter", err, stderr); !ok {
		return code
	}
	log := o.log.Logger(stderr)
	for _, d := range o.deprecations {
		log.Warn(d)
	}
	if err := serve(ctx, o, log); err != nil {
		log.Error("alerter failed", "err", err)
		return 1
	}
	return 0
}
