package ingest

// Grace: UNKNOWN_TABLE during a migration is retried for a while.
//
// An insert into landing that starts in the instant a migration creates or
// drops one of landing's views fails whole on ClickHouse 18.16 with
// UNKNOWN_TABLE (code 60) naming that view: the server lists the view
// among landing's dependencies a moment before it can be found, or a
// moment after it was dropped (schema's TestUpgradeTo010UnderInserts).
// During a rolling upgrade an older ingester inserts while the newer one
// migrates, and stopping on that error would make it exit and replay from
// its last commit. So, once this process has stored rows (the table and
// its views were there), UNKNOWN_TABLE is retried like a transient error
// for up to Config.UnknownTableGrace from the first such refusal in a row,
// and is permanent after that. A table missing before anything was stored
// (a wrong --clickhouse.table, a database nobody migrated) is permanent at
// once, and every other schema or auth error stays permanent.

import (
	"errors"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// defaultUnknownTableGrace covers a migration's DDL statements on a busy
// server with room; a table that stays missing stops ingest that late.
const defaultUnknownTableGrace = 30 * time.Second

// codeUnknownTable is ClickHouse's UNKNOWN_TABLE.
const codeUnknownTable = 60

// schemaGrace is the writer's state of the grace. The writer is one
// goroutine, so it needs no lock.
type schemaGrace struct {
	ever  bool      // rows were stored by this process
	since time.Time // the first UNKNOWN_TABLE since the last stored insert; zero if none
}

// stored notes an insert that stored all its rows: the grace starts anew
// at the next refusal.
func (g *schemaGrace) stored() { g.ever, g.since = true, time.Time{} }

// storedSome notes an insert of which some shards stored their rows: the
// tables were there, but a refusal of the others goes on counting.
func (g *schemaGrace) storedSome() { g.ever = true }

// allows reports whether err, a permanent error, may still be retried at
// now, and how much of the grace is left.
func (g *schemaGrace) allows(err error, grace time.Duration, now time.Time) (time.Duration, bool) {
	var ex *clickhouse.Exception
	if grace <= 0 || !g.ever || !errors.As(err, &ex) || ex.Code != codeUnknownTable {
		return 0, false
	}
	if g.since.IsZero() {
		g.since = now
	}
	left := grace - now.Sub(g.since)
	return left, left > 0
}
