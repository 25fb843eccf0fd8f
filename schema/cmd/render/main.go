// Command render prints errtrail's ClickHouse DDL for a server version, as
// SQL or as JSON (for scripts/check-modern-sql):
//
//	go run ./schema/cmd/render -server 25.8 [-cluster name] [-json]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/errtrail/errtrail/schema"
)

func main() {
	server := flag.String("server", schema.Modern.String(), "ClickHouse server version to render for, e.g. 18.16.1 or 25.8")
	cluster := flag.String("cluster", "", "render ON CLUSTER DDL, Replicated* and Distributed tables for this cluster")
	database := flag.String("database", schema.DefaultDatabase, "database that holds the tables")
	days := flag.Int("retention-days", schema.DefaultRetentionDays, "retention of errors, dead_letter and error_lookup")
	rollupDays := flag.Int("rollup-retention-days", schema.DefaultRollupRetentionDays, "retention of errors_1m and outcomes_1m")
	asJSON := flag.Bool("json", false, "print the migrations as JSON, plus the landing columns and the lookup query")
	flag.Parse()

	v, err := schema.ParseServerVersion(*server)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	opts := schema.Options{Database: *database, Cluster: *cluster, RetentionDays: *days, RollupRetentionDays: *rollupDays}
	if err := opts.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	migs := schema.Render(v, opts)
	if !*asJSON {
		fmt.Print(schema.SQL(migs))
		return
	}
	type column struct{ Name, Type string }
	cols := make([]column, len(schema.LandingColumns))
	for i, c := range schema.LandingColumns {
		cols[i] = column{c.Name, c.Type}
	}
	out := struct {
		Server     string
		Features   schema.Features
		Migrations []schema.Migration
		Landing    []column
		Lookup     string
		// InsertSettings are those of one landing insert, with an example token.
		InsertSettings map[string]any
	}{v.String(), schema.FeaturesOf(v), migs, cols, schema.LookupQuery(opts), schema.InsertSettings(v, "example-batch-token")}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
