package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/schema"
)

// dbPrefix starts the name of every database this program creates (and
// drops, including ones a killed run left behind).
const dbPrefix = "errtrail_views_"

// The views on landing, as schema renders them (render.go).
var landingViews = []string{
	"mv1_errors_v8", "mv2_dead_letter", "mv3_error_lookup", "mv4_errors_1m_v2",
	"mv5_outcomes_1m", "mv6_callers_1m", "mv7_findings_1h",
	"mv8_error_groups", "mv8_error_groups_1h", "mv9_ingest_progress",
}

// groupViews are the views of migration 008's group rollups, left out
// together by the variant no-groups (their cost as one).
var groupViews = []string{"mv8_error_groups", "mv8_error_groups_1h"}

// variant is the real schema (schema.Migrate) with some views dropped or
// re-created from an edited rendering.
type variant struct {
	name string
	// base is the variant without views that generates the same rows: its
	// cost (generating and inserting them into Null) is subtracted.
	base string
	msg  int      // message bytes
	drop []string // views dropped after Migrate
	// add re-creates views from their rendered statements after the
	// drops: a view a later migration dropped (mv4_errors_1m).
	add []string
	// edit re-creates one view from its rendered CREATE statement.
	editView string
	edit     func(stmt string) (string, error)
}

func (v variant) db() string {
	return dbPrefix + strings.NewReplacer("-", "_").Replace(v.name)
}

func allVariants() []variant {
	vs := []variant{
		{name: "all", base: "none", msg: 100},
		{name: "none", base: "none", msg: 100, drop: landingViews},
	}
	for _, mv := range landingViews {
		vs = append(vs, variant{name: "no-" + mv, base: "none", msg: 100, drop: []string{mv}})
	}
	vs = append(vs,
		variant{name: "no-groups", base: "none", msg: 100, drop: groupViews},
		variant{name: "lookup-3ids", base: "none", msg: 100, editView: "mv3_error_lookup", edit: lookupOnly("error_id", "request_id", "event_id")},
		// The schema before migration 010: errors_1m with caller in its key
		// instead of errors_1m_v2. 010 leaves a Null table named
		// mv4_errors_1m, dropped first, or the view's IF NOT EXISTS would
		// create nothing.
		variant{name: "old-errors_1m", base: "none", msg: 100, drop: []string{"mv4_errors_1m_v2", "mv4_errors_1m"}, add: []string{"mv4_errors_1m"}},
		variant{name: "msg-8k", base: "none-8k", msg: 8 << 10},
		variant{name: "msg-64k", base: "none-64k", msg: 64 << 10},
		variant{name: "msg-64k-cap8k", base: "none-64k", msg: 64 << 10, editView: "mv1_errors_v8", edit: capMessage(8 << 10)},
		variant{name: "none-8k", base: "none-8k", msg: 8 << 10, drop: landingViews},
		variant{name: "none-64k", base: "none-64k", msg: 64 << 10, drop: landingViews},
	)
	return vs
}

// lookupOnly keeps only the given id kinds in mv3_error_lookup's ARRAY JOIN
// list, e.g. "(error_id, 'error_id')"; event_id's entry is an expression
// but ends the same way.
func lookupOnly(kinds ...string) func(string) (string, error) {
	return func(stmt string) (string, error) {
		const open = "arrayFilter(p -> tupleElement(p, 1) != '', ["
		i := strings.Index(stmt, open)
		j := strings.Index(stmt, "]) AS id_pair")
		if i < 0 || j < i {
			return "", fmt.Errorf("lookupOnly: the ARRAY JOIN list is not where render.go puts it")
		}
		var keep []string
		for _, p := range strings.Split(stmt[i+len(open):j], ",\n") {
			for _, k := range kinds {
				if strings.HasSuffix(strings.TrimSpace(p), ", '"+k+"')") {
					keep = append(keep, p)
				}
			}
		}
		if len(keep) != len(kinds) {
			return "", fmt.Errorf("lookupOnly: found %d of the %d id kinds", len(keep), len(kinds))
		}
		return stmt[:i+len(open)] + strings.Join(keep, ",\n") + stmt[j:], nil
	}
}

// capMessage makes mv1_errors_v8 store at most n bytes of the message.
func capMessage(n int) func(string) (string, error) {
	return func(stmt string) (string, error) {
		const col = "\n    message,\n"
		if strings.Count(stmt, col) != 1 {
			return "", fmt.Errorf("capMessage: message is not one plain column of mv1_errors_v8")
		}
		return strings.Replace(stmt, col, fmt.Sprintf("\n    substring(message, 1, %d) AS message,\n", n), 1), nil
	}
}

// renderedView returns the CREATE statement of one view as Migrate runs it.
func renderedView(ver schema.ServerVersion, db, view string) (string, error) {
	prefix := "CREATE MATERIALIZED VIEW IF NOT EXISTS " + db + "." + view + " "
	for _, m := range schema.Render(ver, schema.Options{Database: db}) {
		for _, st := range m.Statements {
			if strings.HasPrefix(st, prefix) {
				return st, nil
			}
		}
	}
	return "", fmt.Errorf("no rendered statement creates %s.%s", db, view)
}

// setup creates the variant's database from scratch.
func setup(ctx context.Context, conn driver.Conn, ver schema.ServerVersion, v variant) error {
	db := v.db()
	if err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+db); err != nil {
		return err
	}
	if _, err := schema.Migrate(ctx, conn, schema.Options{Database: db}); err != nil {
		return err
	}
	for _, mv := range v.drop {
		if err := conn.Exec(ctx, "DROP TABLE "+db+"."+mv); err != nil {
			return err
		}
	}
	for _, mv := range v.add {
		st, err := renderedView(ver, db, mv)
		if err != nil {
			return err
		}
		if err := conn.Exec(ctx, st); err != nil {
			return fmt.Errorf("%w\n%s", err, st)
		}
	}
	if v.edit != nil {
		st, err := renderedView(ver, db, v.editView)
		if err != nil {
			return err
		}
		if st, err = v.edit(st); err != nil {
			return err
		}
		if err := conn.Exec(ctx, "DROP TABLE "+db+"."+v.editView); err != nil {
			return err
		}
		if err := conn.Exec(ctx, st); err != nil {
			return fmt.Errorf("%w\n%s", err, st)
		}
	}
	return nil
}

// codecProbe tries a column CODEC on the server (18.16 has none: the
// schema renders codecs from 19.1). The result is printed; the codec
// variants are run only where the server accepts the syntax.
func codecProbe(ctx context.Context, conn driver.Conn) error {
	db := dbPrefix + "codec_probe"
	defer conn.Exec(ctx, "DROP DATABASE IF EXISTS "+db)
	if err := conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+db); err != nil {
		return err
	}
	return conn.Exec(ctx, "CREATE TABLE "+db+".t (message String CODEC(ZSTD(1)), other String CODEC(LZ4)) ENGINE = MergeTree ORDER BY tuple()")
}
