package schema

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// An ALTER … ON CLUSTER of a Replicated table is run by one replica of each
// shard: the replicas race for a lock in ZooKeeper, and the winner marks
// the task executed. The distributed DDL worker of old servers checks that
// mark before it takes the lock, so under load a second replica can take
// the lock after the first let it go, run the ALTER again ("column already
// exists") and then fail to create the mark ("Node exists"). On 18.16 that
// error ends the worker's thread; the server stays up and never runs an ON
// CLUSTER statement again (seen in the cluster tests, on a busy 2-core
// machine). On those servers, when Migrate can reach every shard
// (Migrator.Dial), it runs such an ALTER itself on one replica of each
// shard, without ON CLUSTER: replication carries it to the other replicas,
// and no distributed DDL task exists to race on.

// oldDDLWorker reports whether v has the distributed DDL worker described
// above. 20.1 rewrote the task's execution on replicated tables; earlier
// releases are treated as affected.
func oldDDLWorker(v ServerVersion) bool { return !v.AtLeast(20, 1) }

// alterOnClusterRE matches an ALTER TABLE of db.table ON CLUSTER and
// captures the database, the table and the ON CLUSTER clause.
var alterOnClusterRE = regexp.MustCompile(`^ALTER TABLE ([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)( ON CLUSTER [A-Za-z0-9_]+) `)

// DialShard opens a connection to one shard, to any of its replicas
// (host:port of the native protocol, as system.clusters names them), with
// the credentials and settings of the main connection.
type DialShard func(ctx context.Context, replicas []string) (driver.Conn, error)

// statements runs a migration's statements on the connected server.
type statements struct {
	conn   driver.Conn
	opts   Options
	server ServerVersion
	dial   DialShard
}

// exec runs st: through the connection, or, for an ALTER … ON CLUSTER of
// a Replicated table on a server with the old DDL worker and with a
// DialShard, on one replica of each shard (see above). An ADD COLUMN whose
// column exists is done either way.
func (s statements) exec(ctx context.Context, st string) error {
	g := alterOnClusterRE.FindStringSubmatch(st)
	if g == nil || s.dial == nil || !oldDDLWorker(s.server) {
		return execStatement(ctx, s.conn, st)
	}
	replicated, err := s.replicated(ctx, g[1], g[2])
	if err != nil {
		return err
	}
	if !replicated {
		return execStatement(ctx, s.conn, st)
	}
	return s.eachShard(ctx, strings.Replace(st, g[3], "", 1))
}

// replicated reports whether db.table has a Replicated* engine on the
// connected server.
func (s statements) replicated(ctx context.Context, db, table string) (bool, error) {
	var engine string
	err := s.conn.QueryRow(ctx, "SELECT engine FROM system.tables WHERE database = ? AND name = ?", db, table).Scan(&engine)
	if err != nil {
		return false, fmt.Errorf("schema: the engine of %s.%s: %w", db, table, err)
	}
	return strings.HasPrefix(engine, "Replicated"), nil
}

// eachShard runs st on one replica of every shard of the cluster.
func (s statements) eachShard(ctx context.Context, st string) error {
	shards, err := ClusterShards(ctx, s.conn, s.opts)
	if err != nil {
		return err
	}
	for _, sh := range shards {
		c, err := s.dial(ctx, sh.Replicas)
		if err != nil {
			return fmt.Errorf("schema: connect to shard %d (%s): %w", sh.Num, strings.Join(sh.Replicas, ","), err)
		}
		err = execStatement(ctx, c, st)
		c.Close()
		if err != nil {
			return fmt.Errorf("schema: shard %d (%s): %w", sh.Num, strings.Join(sh.Replicas, ","), err)
		}
	}
	return nil
}
