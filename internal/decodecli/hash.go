package decodecli

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/errtrail/errtrail/internal/redactkey"
	"github.com/errtrail/errtrail/redact"
)

// RunHash executes `ingest hash VALUE...`: for each id a customer quotes, it
// prints the keyed hash that replaced it in the rows if it could not be
// stored as it is, so support can search dashboards and SQL by either. It
// reads values from stdin, one a line, when none is given, so they need not
// reach the shell history. Exit code 2 when no key can be read.
func RunHash(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hash", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keyFile := fs.String("redact.key-file", os.Getenv("ERRTRAIL_REDACT_KEY_FILE"), "the deployment's redaction key (default: "+redactkey.DefaultPath()+")")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ingest hash [flags] [VALUE...]\n\nPrints, for each VALUE (stdin lines when none), the hash that replaces it in identifier columns.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	key, _, _, err := redactkey.Load(*keyFile, false)
	if err != nil {
		fmt.Fprintln(stderr, "ingest hash:", err)
		return 2
	}
	r := redact.New(key)
	print := func(v string) { fmt.Fprintln(stdout, r.Lookup(v)) }
	if fs.NArg() > 0 {
		for _, v := range fs.Args() {
			print(v)
		}
		return 0
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		print(sc.Text())
	}
	return 0
}
