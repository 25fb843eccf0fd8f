// Command gen writes errtrail's Grafana dashboards as JSON, or the expanded
// ClickHouse queries of those dashboards for the SQL checks.
//
//	go run ./dashboards/cmd/gen -out dashboards/json
//	go run ./dashboards/cmd/gen -queries -database errtrail > queries.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/errtrail/errtrail/dashboards"
)

func main() {
	out := flag.String("out", "dashboards/json", "directory the dashboard JSON files are written to")
	queries := flag.Bool("queries", false, "print every ClickHouse query of the dashboards, macros and variables expanded, as JSON, instead")
	database := flag.String("database", "errtrail", "with -queries: the value of $database")
	flag.Parse()
	if err := run(*out, *queries, *database); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out string, queries bool, database string) error {
	if queries {
		qs, err := dashboards.ExpandedQueries(dashboards.TestValues(database))
		if err != nil {
			return err
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(qs)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, s := range dashboards.All() {
		b, err := s.JSON()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, s.File), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
