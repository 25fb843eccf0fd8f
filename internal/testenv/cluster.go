package testenv

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ClickHouseCluster is one layout of the local ClickHouse cluster
// (scripts/cluster): its name in remote_servers and the native addresses of
// its nodes, node 1 of the layout first.
type ClickHouseCluster struct {
	Name  string
	Nodes []string
	// first is the number scripts/cluster gives Nodes[0] (1 for layout A,
	// 3 for B).
	first int
}

// Cluster returns layout "A" (1 shard × 2 replicas) or "B" (2 shards × 1
// replica) of the cluster scripts/cluster starts, from the environment or
// .stack/cluster/env, or stops the test: skipped outside CI, failed in CI,
// when its first node does not answer.
func Cluster(t testing.TB, layout string) ClickHouseCluster {
	t.Helper()
	c := ClickHouseCluster{first: 1}
	if layout == "B" {
		c.first = 3
	}
	c.Name = clusterLookup("ERRTRAIL_CLUSTER_"+layout+"_NAME", "errtrail_"+strings.ToLower(layout))
	nodes := clusterLookup("ERRTRAIL_CLUSTER_"+layout+"_NODES", "")
	if nodes != "" {
		c.Nodes = strings.Split(nodes, ",")
	}
	msg := "the ClickHouse cluster (layout " + layout + ") is not running; start it with scripts/cluster up"
	if len(c.Nodes) > 0 {
		conn, err := net.DialTimeout("tcp", c.Nodes[0], 2*time.Second)
		if err == nil {
			conn.Close()
			return c
		}
		msg = "the ClickHouse cluster's node " + c.Nodes[0] + " is not reachable (" + err.Error() + "); start it with scripts/cluster up"
	}
	if InCI() {
		t.Fatal("in CI (CI=" + os.Getenv("CI") + ") and " + msg)
	}
	t.Skip("skipped outside CI: " + msg)
	return c
}

// Node runs scripts/cluster's verb (stop-node, start-node, kill-node) on the
// layout's i-th node (0-based, as in Nodes) and fails the test when it
// fails. Only the cluster's own tests use its nodes, so stopping one
// disturbs nobody else.
func (c ClickHouseCluster) Node(t testing.TB, verb string, i int) {
	t.Helper()
	root := ModuleRoot(t)
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "cluster"), verb, strconv.Itoa(c.first+i))
	cmd.Dir = root
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("scripts/cluster %s %d (%s):\n%s", verb, c.first+i, time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("scripts/cluster %s %d: %v", verb, c.first+i, err)
	}
}

// clusterLookup reads key from the environment, then .stack/cluster/env.
func clusterLookup(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	if dir := moduleRoot(); dir != "" {
		if f, err := os.Open(filepath.Join(dir, ".stack", "cluster", "env")); err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				line := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export ")
				if k, v, ok := strings.Cut(line, "="); ok && k == key {
					return strings.Trim(v, `"'`)
				}
			}
		}
	}
	return def
}
