package testenv

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
	owned bool // taken with ClusterToStop
}

// Cluster returns layout "A" (1 shard × 2 replicas) or "B" (2 shards × 1
// replica) of the cluster scripts/cluster starts, from the environment or
// .stack/cluster/env, or stops the test: skipped outside CI, failed in CI,
// when its first node does not answer. The test shares the layout with
// other tests, in this process and in others (two suites at once), until
// it ends; a test that stops nodes takes it with ClusterToStop instead.
func Cluster(t testing.TB, layout string) ClickHouseCluster {
	t.Helper()
	return cluster(t, layout, syscall.LOCK_SH)
}

// ClusterToStop is Cluster for a test that stops, kills or restarts nodes
// of the layout (Node): it waits until no other test, of any process,
// uses the layout, and keeps every other out until it ends.
func ClusterToStop(t testing.TB, layout string) ClickHouseCluster {
	t.Helper()
	c := cluster(t, layout, syscall.LOCK_EX)
	c.owned = true
	return c
}

func cluster(t testing.TB, layout string, how int) ClickHouseCluster {
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
			lockLayout(t, c.Nodes[0], how)
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

// lockName is the lock file of the layout whose first node is first.
func lockName(first string) string {
	return filepath.Join(os.TempDir(), "errtrail-cluster-"+strings.NewReplacer(":", "-", "/", "-").Replace(first)+".lock")
}

// lockLayout takes an flock on a file named after the layout's first node
// (so every checkout that uses the same servers finds the same file) for
// the rest of the test: shared (LOCK_SH) or exclusive (LOCK_EX).
func lockLayout(t testing.TB, first string, how int) {
	t.Helper()
	holdLock(t, lockName(first), how, "the cluster's test lock", "another test used the layout")
}

// holdLock takes an flock (how: LOCK_SH or LOCK_EX) on the file name,
// created if missing, for the rest of the test, waiting as long as another
// process holds it; what names the lock in failures, why in the log line
// of a wait longer than a second.
func holdLock(t testing.TB, name string, how int, what, why string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatalf("%s %s: %v", what, name, err)
	}
	start := time.Now()
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		t.Fatalf("%s %s: %v", what, name, err)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Logf("waited %s for %s %s (%s)", waited.Round(time.Millisecond), what, name, why)
	}
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}

// Node runs scripts/cluster's verb (stop-node, start-node, kill-node) on the
// layout's i-th node (0-based, as in Nodes) and fails the test when it
// fails. Only a test that took the layout with ClusterToStop may: the
// other tests that use the layout wait for it to end.
func (c ClickHouseCluster) Node(t testing.TB, verb string, i int) {
	t.Helper()
	if !c.owned {
		t.Fatalf("scripts/cluster %s: the test took the layout with Cluster; take it with ClusterToStop to stop its nodes", verb)
	}
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
