package main

import (
	"flag"
	"fmt"
	"io"
)

// commands is the overview that `ingest help` prints and every --help of
// run (the default command) and migrate starts with.
const commands = `usage: ingest [COMMAND] [flags]

Commands:
  run             consume Kafka and insert into ClickHouse until SIGTERM or SIGINT
                  (the default command); applies the schema migrations first
  migrate         apply the schema migrations once and exit (--print: show the DDL
                  for the connected server instead). Optional when run's ClickHouse
                  user may run DDL (run migrates at start); needed first when it may
                  not, run with a user that may
  decode FILE...  decode replies offline and print one JSON record per line
  hash VALUE...   print the hash that replaces VALUE in identifier columns
  help            this text

"ingest COMMAND --help" lists that command's flags; each flag also reads the
variable shown after it (docs/ingest.md).
`

// about is what each subcommand with flags of its own says above them.
var about = map[string]string{
	"run": `usage: ingest [run] [flags]

Consumes --kafka.topic with consumer group --kafka.group, decodes each
message and inserts the records into --clickhouse.database, committing
offsets only after the insert; /metrics, /healthz and /readyz on
--http.listen-address. Applies the schema migrations at start (as
"ingest migrate" does) before it consumes.`,
	"migrate": `usage: ingest migrate [flags]

Applies the schema migrations to --clickhouse.database for the connected
server's version and exits: once, no retries (exit 1 on failure). "ingest
run" applies them too at each start (nothing to do once they are applied),
so migrate is needed only where run's user may not run DDL: run it first
with a user that may (a deploy step). --print shows the DDL instead.`,
}

// usage prints a subcommand's help: the overview of every command (for
// run, the default), what the subcommand does and its own flags.
func usage(fs *flag.FlagSet, name string) {
	w := fs.Output()
	if name == "run" {
		fmt.Fprintf(w, "%s\n", commands)
	}
	fmt.Fprintf(w, "%s\n\nFlags:\n", about[name])
	fs.PrintDefaults()
}

// printCommands writes the overview (ingest help).
func printCommands(w io.Writer) { fmt.Fprint(w, commands) }
