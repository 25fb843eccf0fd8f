package schema

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Shard is one shard of a cluster as the connected node's system.clusters
// lists it.
type Shard struct {
	Num      uint32
	Weight   uint32
	Replicas []string // host:port of each replica (native protocol)
}

// ClusterShards returns the shards of opts.Cluster in shard order.
func ClusterShards(ctx context.Context, conn driver.Conn, opts Options) ([]Shard, error) {
	if opts.Cluster == "" {
		return nil, fmt.Errorf("schema: ClusterShards without a cluster")
	}
	rows, err := conn.Query(ctx, "SELECT shard_num, shard_weight, host_address, port FROM system.clusters WHERE cluster = ? ORDER BY shard_num, replica_num", opts.Cluster)
	if err != nil {
		return nil, fmt.Errorf("schema: shards of cluster %s: %w", opts.Cluster, err)
	}
	defer rows.Close()
	var out []Shard
	for rows.Next() {
		var num, weight uint32
		var host string
		var port uint16
		if err := rows.Scan(&num, &weight, &host, &port); err != nil {
			return nil, fmt.Errorf("schema: shards of cluster %s: %w", opts.Cluster, err)
		}
		if len(out) == 0 || out[len(out)-1].Num != num {
			out = append(out, Shard{Num: num, Weight: weight})
		}
		s := &out[len(out)-1]
		s.Replicas = append(s.Replicas, net.JoinHostPort(host, strconv.Itoa(int(port))))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("schema: the connected server knows no cluster %s", opts.Cluster)
	}
	return out, nil
}

// LocalLanding is the table a shard's rows can be inserted into directly,
// as the Distributed landing table forwards them: landing_local of the
// database, whose views write the shard's local tables.
func LocalLanding(opts Options) string {
	return opts.withDefaults().Database + "." + TableLanding + "_local"
}

// ShardOf returns the index in shards of the shard that the Distributed
// tables send the rows of a Kafka partition to. They shard by
// cityHash64(kafka_topic, kafka_partition) (the rendering's sharding key):
// the key modulo the shards' total weight picks a slot, and the slots go
// to the shards in order, each as many as its weight. The hash is the
// server's own function, evaluated by conn.
func ShardOf(ctx context.Context, conn driver.Conn, shards []Shard, topic string, partition int32) (int, error) {
	var total uint64
	for _, s := range shards {
		total += uint64(s.Weight)
	}
	if total == 0 {
		return 0, fmt.Errorf("schema: the cluster's shards weigh nothing")
	}
	var key uint64
	if err := conn.QueryRow(ctx, "SELECT cityHash64(?, toInt32(?))", topic, partition).Scan(&key); err != nil {
		return 0, fmt.Errorf("schema: sharding key of %s/%d: %w", topic, partition, err)
	}
	slot := key % total
	for i, s := range shards {
		if slot < uint64(s.Weight) {
			return i, nil
		}
		slot -= uint64(s.Weight)
	}
	return len(shards) - 1, nil // not reached
}
