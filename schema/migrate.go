package schema

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Result tells what Migrate did.
type Result struct {
	Server  ServerVersion
	Applied []int // versions applied by this call
	Current []int // versions already applied with the same DDL
	// Drifted lists versions applied on another server version whose DDL
	// renders differently now (typically after a ClickHouse upgrade). The
	// existing tables are kept as they are; they are not an error.
	Drifted []int
	// Repaired lists versions recorded as applied whose tables or views the
	// connected server lacks (a node added to the cluster later, a table
	// dropped by hand): their statements ran again. On a cluster they run
	// ON CLUSTER, and every statement is CREATE … IF NOT EXISTS, so the
	// nodes that have the objects keep them as they are.
	Repaired []int
}

// ChecksumError says that a migration applied earlier on this same server
// version now renders differently: its definition was edited after it was
// applied. Add a new migration instead of editing an old one.
type ChecksumError struct {
	Version   int
	Name      string
	Applied   string
	Rendered  string
	OnVersion string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("schema: migration %03d (%s) was applied on %s with checksum %.12s but now renders as %.12s: add a new migration instead of editing an applied one",
		e.Version, e.Name, e.OnVersion, e.Applied, e.Rendered)
}

// Migrate brings the database up to date: it detects the server version,
// renders the DDL for it, runs the bootstrap (database and
// schema_migrations) and every migration not yet recorded, and records each
// one after all its statements succeeded. A migration recorded as applied
// whose objects the connected server lacks runs again (Result.Repaired):
// point migrate at a node added to a cluster later to give it the tables.
// Every statement is idempotent, so running Migrate again, concurrently from
// two processes, or after a failure half way is safe.
func Migrate(ctx context.Context, conn driver.Conn, opts Options) (Result, error) {
	return Migrator{}.Migrate(ctx, conn, opts)
}

// Migrator is Migrate with a way to reach every shard of a cluster.
type Migrator struct {
	// Dial, when set, lets Migrate run an ALTER … ON CLUSTER of a
	// Replicated table on one replica of each shard itself on servers
	// before 20.1, whose distributed DDL worker can stop on it (alter.go).
	// Without it, or on a later server, such an ALTER runs ON CLUSTER.
	Dial DialShard
}

// Migrate is the package's Migrate, with mg.Dial.
func (mg Migrator) Migrate(ctx context.Context, conn driver.Conn, opts Options) (Result, error) {
	if err := opts.Validate(); err != nil {
		return Result{}, err
	}
	opts = opts.withDefaults()
	v, err := DetectVersion(ctx, conn)
	if err != nil {
		return Result{}, err
	}
	res := Result{Server: v}
	run := statements{conn: conn, opts: opts, server: v, dial: mg.Dial}
	migs := Render(v, opts)
	// The bootstrap (CREATE ... IF NOT EXISTS of the database and
	// schema_migrations) runs only where schema_migrations cannot be read
	// yet: on a cluster its ON CLUSTER statements wait for every node, so
	// running it on every start would keep ingest from starting while one
	// node is down, although nothing is left to create.
	done, err := readApplied(ctx, conn, opts)
	if err != nil {
		for _, st := range migs[0].Statements {
			if err := conn.Exec(ctx, st); err != nil {
				return res, fmt.Errorf("schema: bootstrap: %w\n%s", err, st)
			}
		}
		if opts.Cluster != "" {
			// A node joining a cluster whose schema exists: its new replica of
			// schema_migrations fetches the records in the background. Wait
			// for them, so that the applied migrations are repaired below
			// rather than applied and recorded a second time.
			if err := conn.Exec(ctx, fmt.Sprintf("SYSTEM SYNC REPLICA %s.%s", opts.Database, TableMigrations)); err != nil {
				return res, fmt.Errorf("schema: sync the new replica of %s: %w", TableMigrations, err)
			}
		}
		if done, err = readApplied(ctx, conn, opts); err != nil {
			return res, err
		}
	}
	have, err := localObjects(ctx, conn, opts.Database)
	if err != nil {
		return res, err
	}
	for i, m := range migs {
		if i == 0 {
			continue
		}
		// Objects a later migration drops are never created again: a
		// repair would put the dropped view back on landing, and a fresh
		// database does not need it for the moment until the drop.
		m.Statements = liveStatements(migs, i)
		if a, ok := done[m.Version]; ok {
			switch {
			case a.checksum == m.Checksum:
				res.Current = append(res.Current, m.Version)
			case a.server != v.String():
				res.Drifted = append(res.Drifted, m.Version)
			default:
				return res, &ChecksumError{m.Version, m.Name, a.checksum, m.Checksum, a.server}
			}
			if missing := missingObjects(m, have, droppedAfter(migs, m.Version)); len(missing) > 0 {
				sts := m.Statements
				if migs[i].Repair != nil {
					sts = liveOf(migs, i, migs[i].Repair)
				}
				for i, st := range sts {
					if err := run.exec(ctx, st); err != nil {
						return res, fmt.Errorf("schema: migration %03d (%s), re-creating %v, statement %d: %w\n%s",
							m.Version, m.Name, missing, i+1, err, st)
					}
				}
				res.Repaired = append(res.Repaired, m.Version)
			}
			continue
		}
		for i, st := range m.Statements {
			if err := run.exec(ctx, st); err != nil {
				return res, fmt.Errorf("schema: migration %03d (%s), statement %d: %w\n%s", m.Version, m.Name, i+1, err, st)
			}
		}
		// INSERT ... SELECT, not VALUES: an INSERT with inline VALUES hangs
		// clickhouse-go's Exec against 18.16 (the server waits for a data block).
		err := conn.Exec(ctx, fmt.Sprintf(
			"INSERT INTO %s.%s (version, name, checksum, server_version, applied_at) SELECT toUInt32(?), ?, ?, ?, now()",
			opts.Database, TableMigrations), uint32(m.Version), m.Name, m.Checksum, v.String())
		if err != nil {
			return res, fmt.Errorf("schema: record migration %03d: %w", m.Version, err)
		}
		res.Applied = append(res.Applied, m.Version)
	}
	// A repaired migration re-creates what it created as it first did:
	// without the columns later migrations added (001's errors and landing
	// without 008's source_version) and with objects later migrations
	// dropped (001's mv1_errors). Add and drop them again, and put the Null
	// tables that keep a dropped view's name back.
	if len(res.Repaired) > 0 {
		for _, m := range migs[1:] {
			if m.Version <= res.Repaired[0] {
				continue
			}
			dropped := map[string]bool{}
			for _, st := range m.Statements {
				g := dropRE.FindStringSubmatch(st)
				if g != nil {
					dropped[g[2]] = true
				}
				c := createRE.FindStringSubmatch(st)
				// A drop, a column added, and what a drop is followed by
				// in the same migration (a Distributed table re-created, a
				// Null table keeping a dropped view's name).
				if g != nil || isAddColumn(st) || isNullPlaceholder(st) || c != nil && dropped[c[2]] {
					if err := run.exec(ctx, st); err != nil {
						return res, fmt.Errorf("schema: migration %03d (%s), after a repair: %w\n%s", m.Version, m.Name, err, st)
					}
				}
			}
		}
	}
	return res, nil
}

// execStatement runs one statement of a migration. An ADD COLUMN whose
// column exists already (18.16 has no IF NOT EXISTS there: the migration
// ran before, in part or whole) is done.
func execStatement(ctx context.Context, conn driver.Conn, st string) error {
	err := conn.Exec(ctx, st)
	if err != nil && isAddColumn(st) && isDuplicateColumn(err) {
		return nil
	}
	return err
}

// isDuplicateColumn reports ClickHouse's DUPLICATE_COLUMN (code 15), also
// as a distributed DDL's report from a node.
func isDuplicateColumn(err error) bool {
	var ex *proto.Exception
	if errors.As(err, &ex) && ex.Code == 15 {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "DUPLICATE_COLUMN") || strings.Contains(s, "Code: 15,") || strings.Contains(s, "already exists")
}

// droppedAfter returns the tables and views that migrations after version
// v drop.
func droppedAfter(migs []Migration, v int) map[string]bool {
	out := map[string]bool{}
	for _, m := range migs {
		if m.Version > v {
			for _, n := range droppedViews(m) {
				out[n] = true
			}
		}
	}
	return out
}

// createRE matches a statement that creates a table or view and captures
// its database and name (the renderings never quote them).
var createRE = regexp.MustCompile(`^CREATE (?:TABLE|MATERIALIZED VIEW|VIEW) IF NOT EXISTS ([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)`)

// localObjects returns the names of the tables and views the connected
// server has in db.
func localObjects(ctx context.Context, conn driver.Conn, db string) (map[string]bool, error) {
	rows, err := conn.Query(ctx, "SELECT name FROM system.tables WHERE database = ?", db)
	if err != nil {
		return nil, fmt.Errorf("schema: list the tables of %s: %w", db, err)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("schema: list the tables of %s: %w", db, err)
		}
		have[n] = true
	}
	return have, rows.Err()
}

// liveStatements returns the statements of migs[i] without those that
// create an object a later migration drops (migration 010 drops
// mv4_errors_1m, which migration 003 creates). The checksum stays that of
// every statement, as recorded.
func liveStatements(migs []Migration, i int) []string { return liveOf(migs, i, migs[i].Statements) }

// liveOf is liveStatements of the statements sts of migs[i] (Statements
// or Repair).
func liveOf(migs []Migration, i int, sts []string) []string {
	dropped := map[string]bool{}
	for _, m := range migs[i+1:] {
		for _, n := range droppedViews(m) {
			dropped[n] = true
		}
	}
	var out []string
	for _, st := range sts {
		if g := createRE.FindStringSubmatch(st); g != nil && dropped[g[2]] {
			continue
		}
		out = append(out, st)
	}
	return out
}

// missingObjects returns the tables and views m creates that have lacks,
// leaving out those a later migration dropped.
func missingObjects(m Migration, have, dropped map[string]bool) []string {
	var out []string
	for _, st := range m.Statements {
		if g := createRE.FindStringSubmatch(st); g != nil && !have[g[2]] && !dropped[g[2]] {
			out = append(out, g[2])
		}
	}
	return out
}

// applied is what schema_migrations holds of one migration.
type applied struct{ checksum, server string }

// readApplied reads schema_migrations: the last checksum and server version
// recorded for each migration.
func readApplied(ctx context.Context, conn driver.Conn, opts Options) (map[int]applied, error) {
	done := map[int]applied{}
	rows, err := conn.Query(ctx, fmt.Sprintf(
		"SELECT version, argMax(checksum, applied_at), argMax(server_version, applied_at) FROM %s.%s GROUP BY version",
		opts.Database, TableMigrations))
	if err != nil {
		return nil, fmt.Errorf("schema: read %s: %w", TableMigrations, err)
	}
	defer rows.Close()
	for rows.Next() {
		var ver uint32
		var a applied
		if err := rows.Scan(&ver, &a.checksum, &a.server); err != nil {
			return nil, fmt.Errorf("schema: read %s: %w", TableMigrations, err)
		}
		done[int(ver)] = a
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("schema: read %s: %w", TableMigrations, err)
	}
	return done, nil
}

// isNullPlaceholder reports a statement that creates the Null table a
// migration leaves under the name of a view it dropped (008: mv1_errors,
// 010: mv4_errors_1m), so that an older Migrate finds the name taken.
func isNullPlaceholder(st string) bool {
	return createRE.MatchString(st) && strings.Contains(st, "(\n    dropped_by_migration_") && strings.HasSuffix(st, "ENGINE = Null")
}
