// Package clustertest holds the tests of errtrail on a real ClickHouse
// cluster: the layouts of docs/scaling.md run by scripts/cluster (one
// ZooKeeper, four ClickHouse servers: layout A, 1 shard × 2 replicas, and
// layout B, 2 shards × 1 replica), fed by the real `ingest run` binary from
// the stack's Kafka. It has no code of its own: each test states what the
// cluster must keep (nothing lost, nothing doubled, rollups equal to the
// rows) while a node is killed, stopped or down at start.
package clustertest
