package schema

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestMigrate008OnALiveDatabase: a database at migration 007 holding
// errors, with an ingester that names the 001 columns only, is migrated to
// 008. Its old rows stay once each (source_version ""), the old insert
// still works, the new one stores source_version, every row is stored once
// in errors (the replaced view does not write it twice), and the group
// rollups hold what was inserted after 008 and nothing from before.
func TestMigrate008OnALiveDatabase(t *testing.T) {
	conn, opts, v := openDB(t)
	ctx := context.Background()
	// Migrations 000 to 007, recorded as Migrate records them.
	for _, m := range Render(v, opts) {
		if m.Version > 7 {
			continue
		}
		for _, st := range m.Statements {
			if err := conn.Exec(ctx, st); err != nil {
				t.Fatalf("migration %03d: %v\n%s", m.Version, err, st)
			}
		}
		if m.Version == 0 {
			continue
		}
		if err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO %s.%s (version, name, checksum, server_version, applied_at) SELECT toUInt32(?), ?, ?, ?, now()",
			opts.Database, TableMigrations), uint32(m.Version), m.Name, m.Checksum, v.String()); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	if err := insertLandingColumns(t, conn, opts, landingV1, now,
		row{"event_id": "before-1", "agent": "a", "code": "X", "kafka_offset": int64(1)},
		row{"event_id": "before-2", "agent": "a", "code": "X", "kafka_offset": int64(2)}); err != nil {
		t.Fatal(err)
	}
	res := migrate(t, conn, opts)
	if fmt.Sprint(res.Applied) != "[8 9 10]" {
		t.Fatalf("Migrate on a 007 database: %+v; want 8, 9 and 10 applied", res)
	}
	if err := insertLandingColumns(t, conn, opts, landingV1, now,
		row{"event_id": "old-ingester", "agent": "a", "code": "X", "kafka_offset": int64(3)}); err != nil {
		t.Fatalf("an ingester naming the 001 columns after 008: %v", err)
	}
	if err := insertLanding(t, conn, opts, now,
		row{"event_id": "new-ingester", "agent": "a", "code": "X", "kafka_offset": int64(4), "source_version": "2.1.0"}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	rows, err := conn.Query(ctx, "SELECT event_id, source_version FROM "+opts.Database+".errors ORDER BY event_id")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var id, ver string
		if err := rows.Scan(&id, &ver); err != nil {
			t.Fatal(err)
		}
		got[id] = ver
		n++
	}
	rows.Close()
	want := map[string]string{"before-1": "", "before-2": "", "old-ingester": "", "new-ingester": "2.1.0"}
	if n != 4 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("errors holds %d rows %v; want each of %v once", n, got, want)
	}
	if c := count(t, conn, "SELECT count() FROM system.tables WHERE database = ? AND name = 'mv1_errors' AND engine != 'Null'", opts.Database); c != 0 {
		t.Error("the view mv1_errors is still there after 008 (its name must be a Null table's)")
	}
	var groupRows, versions uint64
	if err := conn.QueryRow(ctx, "SELECT toUInt64(countMerge(n)), toUInt64(uniqExact(source_version)) FROM "+opts.Database+".error_groups").Scan(&groupRows, &versions); err != nil {
		t.Fatal(err)
	}
	if groupRows != 2 || versions != 2 {
		t.Errorf("error_groups counts %d errors in %d versions; want the 2 inserted after 008, in 2 versions (\"\" and 2.1.0)", groupRows, versions)
	}
	// Migrate again: nothing applied, nothing repaired, mv1_errors not back.
	if again := migrate(t, conn, opts); len(again.Applied) != 0 || len(again.Repaired) != 0 {
		t.Errorf("a second Migrate: %+v; want nothing to do", again)
	}
}

// TestRepairOfErrorsKeepsMigration008: errors dropped by hand (a node that
// lacks it) is re-created by migration 001's repair as 001 made it; the
// repair adds 008's column again and drops 001's view again, so the next
// insert stores source_version, once.
func TestRepairOfErrorsKeepsMigration008(t *testing.T) {
	conn, opts, _ := openDB(t)
	migrate(t, conn, opts)
	if err := conn.Exec(context.Background(), "DROP TABLE "+opts.Database+".errors"); err != nil {
		t.Fatal(err)
	}
	res := migrate(t, conn, opts)
	if fmt.Sprint(res.Repaired) != "[1]" {
		t.Fatalf("Migrate after dropping errors: %+v; want 1 repaired", res)
	}
	now := time.Now()
	if err := insertLanding(t, conn, opts, now, row{"event_id": "after-repair", "agent": "a", "source_version": "1.0.1", "kafka_offset": int64(1)}); err != nil {
		t.Fatalf("insert after the repair: %v", err)
	}
	if n := count(t, conn, "SELECT count() FROM "+opts.Database+".errors WHERE source_version = '1.0.1'"); n != 1 {
		t.Errorf("errors holds %d rows of version 1.0.1 after the repair; want 1 (once: mv1_errors dropped again)", n)
	}
	// The name stays taken by 008's Null table, never the old view.
	if c := count(t, conn, "SELECT count() FROM system.tables WHERE database = ? AND name = 'mv1_errors' AND engine != 'Null'", opts.Database); c != 0 {
		t.Error("the repair left the view mv1_errors")
	}
	if c := count(t, conn, "SELECT count() FROM system.tables WHERE database = ? AND name = 'mv1_errors' AND engine = 'Null'", opts.Database); c != 1 {
		t.Error("the repair did not put mv1_errors' Null table back")
	}
}
