package schema

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestUnitMigrationIdentity pins what Migrate records for each migration.
// Version is the key of schema_migrations and Name is part of the
// checksum, so a changed pair makes every database migrated before the
// change fail with a ChecksumError (or, for a changed version, run the
// migration again). Rename the Go methods instead; a new migration gets a
// new version.
func TestUnitMigrationIdentity(t *testing.T) {
	want := []string{
		"0 bootstrap",
		"1 landing, errors and dead_letter",
		"2 error_lookup",
		"3 errors_1m and outcomes_1m rollups",
		"4 ingest_progress",
		"5 callers_1m rollup",
		"6 findings_1h rollup",
		"7 incidents",
		"8 source_version and error groups",
		"9 trace ids, origin and error_traces",
		"10 errors_1m_v2 without caller",
	}
	for _, v := range []ServerVersion{Oldest, Modern} {
		var got []string
		for _, m := range Render(v, Options{}) {
			got = append(got, fmt.Sprintf("%d %s", m.Version, m.Name))
		}
		if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
			t.Errorf("recorded migration identities for %s:\n got %q\nwant %q (followed by any new ones)", v, got, want)
		}
	}
}

var viewRE = regexp.MustCompile(`(?s)^CREATE MATERIALIZED VIEW IF NOT EXISTS [A-Za-z0-9_]+\.([A-Za-z0-9_]+)\b.*?\nFROM [A-Za-z0-9_]+\.([A-Za-z0-9_]+)\b`)

// renderedLandingViews returns the views of migs that read landing (or
// landing_local in a cluster rendering), as the server sees them once
// Migrate is done: a view a later migration drops is not among them.
func renderedLandingViews(t *testing.T, migs []Migration) []string {
	t.Helper()
	var out []string
	for i, m := range migs {
		for _, st := range liveStatements(migs, i) {
			if !strings.HasPrefix(st, "CREATE MATERIALIZED VIEW") {
				continue
			}
			sm := viewRE.FindStringSubmatch(st)
			if sm == nil {
				t.Fatalf("migration %03d: cannot read the view's name and source:\n%s", m.Version, st)
			}
			if name, source := sm[1], sm[2]; source == TableLanding || source == TableLanding+"_local" {
				out = append(out, name)
			}
		}
		// A later migration's DROP removes a view from the set the
		// server runs (migration 008 replaces mv1_errors).
		for _, name := range droppedViews(m) {
			out = slices.DeleteFunc(out, func(n string) bool { return n == name })
		}
	}
	return out
}

// viewOrderProblems says where the rendered view names break the declared
// dependencies: a view rendered but not declared (its order was never
// thought about), declared but not rendered, or one whose name does not
// sort after a view it depends on.
func viewOrderProblems(rendered []string, declared []landingView) []string {
	var out []string
	for _, n := range rendered {
		if !slices.ContainsFunc(declared, func(v landingView) bool { return v.name == n }) {
			out = append(out, fmt.Sprintf("view %s is rendered but not declared in landingViews", n))
		}
	}
	for _, v := range declared {
		if !slices.Contains(rendered, v.name) {
			out = append(out, fmt.Sprintf("view %s is declared in landingViews but not rendered", v.name))
			continue
		}
		for _, dep := range v.dependencies(declared) {
			if !(dep < v.name) {
				out = append(out, fmt.Sprintf("view %s must run after %s, but its name sorts before it", v.name, dep))
			}
		}
	}
	return out
}

// TestUnitViewNameOrder: on 18.16 ClickHouse runs landing's views in name
// order, and ingest_progress is correct only if its view runs after every
// other one (landingViews). The names checked are the ones the DDL
// creates, in every rendering.
func TestUnitViewNameOrder(t *testing.T) {
	for _, c := range []struct {
		v    ServerVersion
		opts Options
	}{
		{Oldest, Options{}},
		{Modern, Options{}},
		{Oldest, Options{Cluster: "c1"}},
		{Modern, Options{Cluster: "c1", Database: "et"}},
	} {
		rendered := renderedLandingViews(t, Render(c.v, c.opts))
		if len(rendered) == 0 {
			t.Fatalf("%s %+v: no views on landing found in the rendering", c.v, c.opts)
		}
		for _, p := range viewOrderProblems(rendered, landingViews) {
			t.Errorf("%s %+v: %s", c.v, c.opts, p)
		}
	}
}

// The check itself: renaming a view so that it sorts after the progress
// view, or adding one nobody declared, is reported.
func TestUnitViewOrderProblemsReportsBreaks(t *testing.T) {
	names := func(vs []landingView) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.name)
		}
		return out
	}
	if p := viewOrderProblems(names(landingViews), landingViews); len(p) != 0 {
		t.Fatalf("declared order reported as broken: %v", p)
	}
	renamed := slices.Clone(landingViews)
	for i := range renamed {
		if renamed[i].name == viewFindings1h {
			renamed[i].name = "mv10_findings_1h" // "mv10_" < "mv9_", so still fine
		}
		if renamed[i].name == viewCallers1m {
			renamed[i].name = "mva_callers_1m" // sorts after "mv9_"
		}
	}
	p := viewOrderProblems(names(renamed), renamed)
	if len(p) != 1 || !strings.Contains(p[0], "must run after mva_callers_1m") {
		t.Errorf("a view renamed past the progress view: problems %q; want one naming mva_callers_1m", p)
	}
	p = viewOrderProblems(append(names(landingViews), "mv8_new"), landingViews)
	if len(p) != 1 || !strings.Contains(p[0], "mv8_new is rendered but not declared") {
		t.Errorf("an undeclared view: problems %q", p)
	}
}
