package schema

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// rowGaps lists what the migrations migs (rendered for a server with
// features f, cluster or not) lack for the columns cols: each column must be
// added to landing, and to the table that keeps it (Kept), by the migration
// named by its Added and by no earlier one, with its declared type (in
// errors LowCardinality where declared and the server has it); on a
// cluster on both the local and the Distributed table; and a materialized
// view into the kept table, in that migration or a later one, must select
// it.
func rowGaps(migs []Migration, cols []RowColumn, f Features, opts Options) []string {
	opts = opts.withDefaults()
	var gaps []string
	for _, c := range cols {
		tables := []string{TableLanding}
		if c.Kept != "" {
			tables = append(tables, c.Kept)
		}
		for _, table := range tables {
			typ := c.Type
			if table == TableErrors && c.LC && f.LowCardinality {
				typ = "LowCardinality(" + c.Type + ")"
			}
			def := regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(c.Name+" "+typ) + `([\s,;]|$)`)
			if table != TableErrors { // error_traces and dead_letter declare LowCardinality for themselves
				def = regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(c.Name+" ") + `(LowCardinality\()?` + regexp.QuoteMeta(c.Type) + `\)?([\s,;]|$)`)
			}
			names := []string{table}
			if opts.Cluster != "" {
				names = []string{table + "_local", table}
			}
			for _, name := range names {
				target := regexp.MustCompile(`^(CREATE TABLE IF NOT EXISTS|ALTER TABLE) ` + regexp.QuoteMeta(opts.Database+"."+name) + `\s`)
				added := false
				for _, m := range migs {
					for _, s := range m.Statements {
						if !target.MatchString(s) || !def.MatchString(s) {
							continue
						}
						switch {
						case m.Version < c.Added:
							gaps = append(gaps, fmt.Sprintf("%s: in %s already in migration %03d, before %03d", c.Name, name, m.Version, c.Added))
						case m.Version == c.Added:
							added = true
						}
					}
				}
				if !added {
					gaps = append(gaps, fmt.Sprintf("%s: migration %03d does not add it to %s as %s", c.Name, c.Added, name, typ))
				}
			}
			if table == TableLanding {
				continue
			}
			into := regexp.MustCompile(`^CREATE MATERIALIZED VIEW IF NOT EXISTS \S+( ON CLUSTER \S+)? TO ` +
				regexp.QuoteMeta(opts.Database+"."+names[0]) + ` AS\s`)
			word := regexp.MustCompile(`\b` + regexp.QuoteMeta(c.Name) + `\b`)
			viewed := false
			for _, m := range migs {
				for _, s := range m.Statements {
					if m.Version >= c.Added && into.MatchString(s) && word.MatchString(s) {
						viewed = true
					}
				}
			}
			if !viewed {
				gaps = append(gaps, fmt.Sprintf("%s: no view of migration %03d or later copies it into %s", c.Name, c.Added, table))
			}
		}
	}
	return gaps
}

// TestRowColumnsAreMigrated: every column of RowColumns is in the DDL of
// the migration that declares it adding it (Added), in landing and the
// table that keeps it, with its type, on the oldest and a current server,
// on one server and on a cluster; and no earlier migration has it.
func TestRowColumnsAreMigrated(t *testing.T) {
	for _, v := range []ServerVersion{Oldest, Modern} {
		for _, cluster := range []string{"", "errtrail_cluster"} {
			opts := Options{Cluster: cluster}
			if gaps := rowGaps(Render(v, opts), RowColumns, FeaturesOf(v), opts); len(gaps) > 0 {
				t.Errorf("%s cluster %q:\n%s", v, cluster, strings.Join(gaps, "\n"))
			}
		}
	}
}

// TestAddingAColumnTakesItsMigration shows what adding a column takes:
// declared in RowColumns alone, it changes no existing migration (their
// checksums are databases' record of them) and rowGaps names what is
// missing; with a migration that adds it to landing and errors and a view
// that copies it, nothing is.
func TestAddingAColumnTakesItsMigration(t *testing.T) {
	opts := Options{}.withDefaults()
	before := Render(Modern, opts)
	saved := RowColumns
	t.Cleanup(func() { RowColumns = saved })
	next := before[len(before)-1].Version + 1
	added := RowColumn{Name: "added_by_test", Type: "String", Added: next, Kept: TableErrors, LC: true,
		From: FromRecord, Reply: true, JSON: "added_by_test", Ingest: "a.str(rec.Code)"}
	RowColumns = append(slices.Clip(saved), added)

	after := Render(Modern, opts)
	if len(after) != len(before) {
		t.Fatalf("%d migrations after declaring a column, %d before", len(after), len(before))
	}
	for i := range after {
		if after[i].Checksum != before[i].Checksum || !slices.Equal(after[i].Statements, before[i].Statements) {
			t.Errorf("migration %03d changed when a column was declared for migration %03d", after[i].Version, next)
		}
	}
	gaps := rowGaps(after, RowColumns, FeaturesOf(Modern), opts)
	if len(gaps) != 3 || !strings.Contains(strings.Join(gaps, "\n"), "added_by_test: migration") {
		t.Errorf("declared without a migration: gaps\n%s\nwant landing, errors and the view named", strings.Join(gaps, "\n"))
	}

	db := opts.Database
	mig := Migration{Version: next, Name: "added_by_test", Statements: []string{
		"ALTER TABLE " + db + ".landing ADD COLUMN IF NOT EXISTS added_by_test String",
		"ALTER TABLE " + db + ".errors ADD COLUMN IF NOT EXISTS added_by_test LowCardinality(String)",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS " + db + ".mv1_errors_vN TO " + db + ".errors AS\nSELECT\n    event_id,\n    added_by_test\nFROM " + db + ".landing\nWHERE dead = 0",
	}}
	if gaps := rowGaps(append(after, mig), RowColumns, FeaturesOf(Modern), opts); len(gaps) > 0 {
		t.Errorf("with its migration:\n%s", strings.Join(gaps, "\n"))
	}
	wrong := mig
	wrong.Statements = slices.Clone(mig.Statements)
	wrong.Statements[1] = strings.Replace(wrong.Statements[1], "LowCardinality(String)", "UInt8", 1)
	if gaps := rowGaps(append(after, wrong), RowColumns, FeaturesOf(Modern), opts); len(gaps) != 1 || !strings.Contains(gaps[0], "errors") {
		t.Errorf("a migration adding it to errors with another type: gaps %q; want errors named", gaps)
	}
}

// TestRowColumnsDeclaration checks the declarations themselves: names
// unique, in migration order, a known table, what fills them, an ingest
// expression, the flags consistent; and the hand-declared tables that keep
// some of them (error_traces, dead_letter) with the same types.
func TestRowColumnsDeclaration(t *testing.T) {
	seen := map[string]bool{}
	last := 0
	kept := map[string][]col{TableErrorTraces: errorTracesColumns, TableDeadLetter: deadLetterColumns}
	for _, c := range RowColumns {
		if seen[c.Name] {
			t.Errorf("%s declared twice", c.Name)
		}
		seen[c.Name] = true
		if c.Added < last || c.Added < 1 {
			t.Errorf("%s: migration %03d after a column of %03d: columns are appended in migration order", c.Name, c.Added, last)
		}
		last = c.Added
		if _, ok := goTypes[c.Type]; !ok {
			t.Errorf("%s: type %s has no Go type", c.Name, c.Type)
		}
		switch c.Kept {
		case "", TableErrors, TableErrorTraces, TableDeadLetter:
		default:
			t.Errorf("%s: kept in %q", c.Name, c.Kept)
		}
		if c.From == 0 || c.Ingest == "" {
			t.Errorf("%s: From %d, Ingest %q: say what fills it", c.Name, c.From, c.Ingest)
		}
		if (c.LC || c.Codec != 0) && c.Kept != TableErrors {
			t.Errorf("%s: LC and Codec are how errors stores a column; it is kept in %q", c.Name, c.Kept)
		}
		if c.Reply && c.From != FromRecord || c.Decoded && c.JSON == "" || c.From == FromDeadLetter && c.JSON != "" {
			t.Errorf("%s: Reply %v Decoded %v JSON %q From %d do not fit together", c.Name, c.Reply, c.Decoded, c.JSON, c.From)
		}
		if c.Kept == TableErrorTraces {
			f, ok := reflect.TypeFor[TraceRow]().FieldByNameFunc(func(n string) bool {
				sf, _ := reflect.TypeFor[TraceRow]().FieldByName(n)
				return sf.Tag.Get("ch") == c.Name
			})
			if !ok || f.Type != goType(c.Type) {
				t.Errorf("%s: TraceRow does not read it as %s", c.Name, goType(c.Type))
			}
		}
		if cols, ok := kept[c.Kept]; ok {
			i := slices.IndexFunc(cols, func(k col) bool { return k.name == c.Name })
			if i < 0 || cols[i].typ != c.Type {
				t.Errorf("%s: %s does not hold it as %s", c.Name, c.Kept, c.Type)
			}
		}
	}
}
