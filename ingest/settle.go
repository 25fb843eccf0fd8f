package ingest

// An insert attempt cancelled because its generation was abandoned
// (group.go) may still be running on the server: a block it received whole
// is written, views and progress row included, after the client left. The
// partitions' next owner reads progress right before its own insert, so
// this member must not rejoin the group until the server is done with the
// cancelled attempt; else the rollups count that block twice (seen in
// TestRebalanceTwoConsumers with two suites on one 2-core machine: 500 and
// 928 events counted twice). The drain waits for every attempt to return
// before the member rejoins, so the attempt waits here.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// The other side of it: a member SIGKILLed (or dropped from the group)
// in the middle of an insert cannot wait, and the server goes on writing
// the blocks it received (seen in TestFaultSIGKILL with two suites at
// once: the dead member's insert of 3,000 rows was still being written 16 s
// after the kill, 372 rows of it in when the replacement read progress,
// and the other 2,628 landed twice). So before the first attempt of the
// process and of each generation, the writer waits until the inserts into
// its landing table that the server is running at that moment have ended
// (awaitEarlierInserts); only then does it read progress.

// insertQueryID returns a query id of its own for one insert attempt.
func insertQueryID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return insertQueryPrefix + hex.EncodeToString(b[:])
}

// settlePoll is how often awaitServerEnd asks the server; settleMax bounds
// the wait: the drain abandons a generation at two thirds of the rebalance
// timeout, and a member that has not rejoined by its end is dropped from
// the group (a block normally settles well within a second).
const (
	settlePoll = 50 * time.Millisecond
	settleMax  = 8 * time.Second
)

// awaitServerEnd returns once the server conn reaches no longer runs the
// query qid (system.processes), or after settleMax (InsertTimeout if less),
// or when hard ends; the last two are logged, since the next owner may then
// count a block twice in the rollups.
func (w *writer) awaitServerEnd(hard context.Context, conn driver.Conn, qid string) {
	ctx, cancel := context.WithTimeout(hard, min(w.cfg.InsertTimeout, settleMax))
	defer cancel()
	for {
		var n uint64
		err := conn.QueryRow(ctx, "SELECT count() FROM system.processes WHERE query_id = ?", qid).Scan(&n)
		if err == nil && n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			w.warn.Log(slog.LevelWarn, "a cancelled insert may still be running on the server; its partitions' next owner may store its last block again",
				"query_id", qid, "err", err)
			return
		case <-time.After(settlePoll):
		}
	}
}

// insertQueryPrefix starts the query id of every insert attempt.
const insertQueryPrefix = "errtrail-insert-"

// awaitEarlierInserts returns once every insert into the landing table
// (each shard's, on a cluster) that the server runs when it is called has
// ended: an insert of a member that died or was dropped mid-insert, whose
// rows this process is about to read progress for. Other live members'
// inserts running at that moment are waited for as well; they end as
// inserts do. The wait is bounded by InsertTimeout and ends with stop
// (the generation abandoned) or hard; when it runs out, or system.processes
// cannot be read, it says so and goes on: the rows may then be counted
// twice in the rollups, never lost.
func (w *writer) awaitEarlierInserts(hard, stop context.Context) {
	conns, table := []driver.Conn{w.conn}, w.cfg.Table
	if sh := w.cfg.Shards; sh != nil {
		conns, table = sh.Conns, sh.Table
	}
	ctx, cancel := context.WithTimeout(hard, w.cfg.InsertTimeout)
	defer cancel()
	if stop != hard {
		defer context.AfterFunc(stop, cancel)()
	}
	prefix := "INSERT INTO " + table + " (" // how insertInto(table) begins
	for _, conn := range conns {
		if conn == nil {
			continue
		}
		running, err := runningInserts(ctx, conn, prefix)
		if err != nil {
			w.warn.Log(slog.LevelWarn, "cannot list the inserts running on the server; a former owner's last insert may be stored twice in the rollups",
				"err", err)
			continue
		}
		if len(running) == 0 {
			continue
		}
		start := time.Now()
		w.log.Info("waiting for inserts that were running before this generation's first (a former owner's may still be writing)",
			"inserts", len(running))
		for len(running) > 0 {
			select {
			case <-ctx.Done():
				if stop.Err() == nil && hard.Err() == nil {
					w.warn.Log(slog.LevelWarn, "inserts begun before this generation still run; their rows may be stored twice in the rollups",
						"inserts", len(running), "waited", time.Since(start).Round(time.Millisecond))
				}
				return
			case <-time.After(settlePoll):
			}
			now, err := runningInserts(ctx, conn, prefix)
			if err != nil {
				continue // ctx's end reports it
			}
			for id := range running {
				if !now[id] {
					delete(running, id)
				}
			}
		}
		w.log.Info("the inserts begun before this generation ended", "waited", time.Since(start).Round(time.Millisecond))
	}
}

// runningInserts returns the query ids of the errtrail inserts whose query
// starts with prefix that the server conn reaches is running.
func runningInserts(ctx context.Context, conn driver.Conn, prefix string) (map[string]bool, error) {
	rows, err := conn.Query(ctx, "SELECT query_id FROM system.processes WHERE position(query_id, ?) = 1 AND position(query, ?) = 1",
		insertQueryPrefix, prefix)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}
