package clustertest

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/stackload"
	"github.com/errtrail/errtrail/internal/testenv"
)

// TestClusterAlterWithoutDistributedDDL, layouts A (one shard, two
// replicas) and B (two shards): on 18.16, `ingest migrate` runs migration
// 008's ALTER of the replicated errors_local on one replica of each shard
// itself (schema/alter.go), so every node ends with the column and the
// distributed DDL queue holds no task for that ALTER (the task whose
// replicas race on 18.16 and can end its DDL worker). The same queue does
// hold the migration's CREATE tasks of the database: the check reads the
// right place.
func TestClusterAlterWithoutDistributedDDL(t *testing.T) {
	for _, layout := range []string{"A", "B"} {
		t.Run(layout, func(t *testing.T) {
			cl := testenv.Cluster(t, layout)
			n1 := stackload.Open(t, cl.Nodes[0])
			db := "errtrail_cluster_alter_" + uniq()
			dropDatabase(t, n1, cl, db)
			out, err := exec.Command(ingestBinary(t), "migrate", "--clickhouse.addr", cl.Nodes[0],
				"--clickhouse.database", db, "--clickhouse.cluster", cl.Name).CombinedOutput()
			if err != nil {
				t.Fatalf("ingest migrate: %v\n%s", err, out)
			}
			for _, node := range cl.Nodes {
				waitCount(t, stackload.Open(t, node), "SELECT count() FROM system.columns WHERE database = '"+db+
					"' AND table = 'errors_local' AND name = 'source_version'", 1, 5*time.Minute) // a hang guard: 18.16 applies it at once
			}

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rows, err := n1.Query(ctx, "SELECT name, value FROM system.zookeeper WHERE path = '/clickhouse/task_queue/ddl'")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			creates := 0
			for rows.Next() {
				var name, entry string
				if err := rows.Scan(&name, &entry); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(entry, "ALTER TABLE "+db+".") {
					t.Errorf("distributed DDL task %s alters a table of %s:\n%s", name, db, entry)
				}
				if strings.Contains(entry, "CREATE TABLE IF NOT EXISTS "+db+".") {
					creates++
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if creates == 0 {
				t.Errorf("the DDL queue holds no CREATE task of %s: the check does not see the migration's tasks", db)
			}
		})
	}
}
