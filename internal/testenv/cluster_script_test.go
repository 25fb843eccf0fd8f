package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestUnitClusterScriptFindsDeadDDLWorker: scripts/cluster's
// ddl_worker_died, run on made-up logs (no server), tells a node whose
// DDLWorker ended since its last start from one restarted after that, and
// from one whose logs say nothing of it.
func TestUnitClusterScriptFindsDeadDDLWorker(t *testing.T) {
	script := filepath.Join(ModuleRoot(t), "scripts", "cluster")
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, "node2"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "node2", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	died := func() bool {
		t.Helper()
		// The function alone, out of the script (its main would run).
		cmd := exec.Command("bash", "-c", `eval "$(sed -n '/^ddl_worker_died()/,/^}/p' "$1")"; DIR="$2"; ddl_worker_died 2`, "x", script, dir)
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return err == nil
	}
	const started = "2026.12.05 12:45:26.692356 [ 1 ] {} <Information> Application: Ready for connections.\n"
	const ended = "2026.12.05 12:49:07.670036 [ 16 ] {q} <Error> DDLWorker: Unexpected ZooKeeper error: Code: 999, Node exists\n"
	write("clickhouse-server.log", started)
	write("clickhouse-server.err.log", "2026.12.05 12:46:00.000000 [ 3 ] {} <Error> executeQuery: Code: 60, table doesn't exist\n")
	if died() {
		t.Error("a node whose logs say nothing of its DDLWorker was taken for dead")
	}
	write("clickhouse-server.err.log", ended)
	if !died() {
		t.Error("a node whose DDLWorker ended after its start was not found")
	}
	write("clickhouse-server.log", started+"2026.12.05 13:21:00.000000 [ 1 ] {} <Information> Application: Ready for connections.\n")
	if died() {
		t.Error("a node restarted after its DDLWorker ended was taken for dead")
	}
}
