package ingest

// Writing to a cluster's shards directly.
//
// Through the Distributed landing table, a synchronous insert fails whole
// while any shard is down, on 18.16 even when no row goes to it (measured:
// it opens a connection to every shard). With Config.Shards the writer
// sends each shard its rows itself, as the Distributed table would:
// the rows of a partition go to the shard the sharding key picks
// (schema.ShardOf), into that shard's local landing table, whose views
// write the shard's local tables (the replicas copy them). One shard down
// then fails only its own rows; the others are stored, and the failed rows
// are parked (park.go) or, without a Group source, retried alone.

import (
	"context"
	"errors"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Shards is a cluster's shards as ingest writes them.
type Shards struct {
	// Table is the local landing table on every shard, database-qualified
	// (schema.LocalLanding).
	Table string
	// Conns holds one connection per shard, in shard order, each reaching
	// that shard's replicas.
	Conns []driver.Conn
	// Of returns the index in Conns of the shard a partition's rows belong
	// to (schema.ShardOf). It is asked once per partition.
	Of func(ctx context.Context, topic string, partition int32) (int, error)
}

// partialError: some shards stored their rows of a slot and others did
// not. The stored rows are gone from the slot.
type partialError struct {
	stored []TopicPartition        // partitions whose rows were all stored
	failed map[TopicPartition]bool // partitions left in the slot
	rows   int                     // rows stored
	err    error                   // a failed shard's error
}

func (e *partialError) Error() string {
	return fmt.Sprintf("ingest: %d partitions stored, %d not (their shard failed): %v", len(e.stored), len(e.failed), e.err)
}
func (e *partialError) Unwrap() error { return e.err }

// shardOf returns the shard of k, asking Shards.Of once per partition.
func (w *writer) shardOf(ctx context.Context, k TopicPartition) (int, error) {
	if i, ok := w.shardIdx[k]; ok {
		return i, nil
	}
	i, err := w.cfg.Shards.Of(ctx, k.Topic, k.Partition)
	if err != nil {
		return 0, err
	}
	if i < 0 || i >= len(w.cfg.Shards.Conns) {
		return 0, fmt.Errorf("ingest: shard %d of %s/%d is not among the %d shards", i, k.Topic, k.Partition, len(w.cfg.Shards.Conns))
	}
	if w.shardIdx == nil {
		w.shardIdx = map[TopicPartition]int{}
	}
	w.shardIdx[k] = i
	return i, nil
}

// insertShards sends each shard its rows of s, one INSERT per shard, and
// returns nil when all were stored, the error when none was, or a
// *partialError (with the stored rows removed from s).
func (w *writer) insertShards(hard, stop context.Context, s *slot) error {
	sh := w.cfg.Shards
	ctx, cancel := context.WithTimeout(hard, w.cfg.InsertTimeout)
	byShard := map[int]map[TopicPartition]bool{}
	for k := range slotParts(s) {
		i, err := w.shardOf(ctx, k)
		if err != nil {
			cancel()
			return err
		}
		if byShard[i] == nil {
			byShard[i] = map[TopicPartition]bool{}
		}
		byShard[i][k] = true
	}
	cancel()
	sql := insertInto(sh.Table)
	if len(byShard) == 1 {
		for i := range byShard {
			return w.insertTo(hard, stop, sh.Conns[i], sql, s, w.settingsFor(s.token))
		}
	}
	pe := &partialError{failed: map[TopicPartition]bool{}}
	for i := range sh.Conns {
		parts := byShard[i]
		if parts == nil {
			continue
		}
		v := s.view(func(tp TopicPartition) bool { return parts[tp] })
		if err := w.insertTo(hard, stop, sh.Conns[i], sql, v, w.settingsFor(v.token)); err != nil {
			if pe.err == nil {
				pe.err = fmt.Errorf("shard %d: %w", i+1, err)
			}
			for k := range parts {
				pe.failed[k] = true
			}
			continue
		}
		pe.rows += v.rows
		for k := range parts {
			pe.stored = append(pe.stored, k)
		}
	}
	switch {
	case pe.err == nil:
		return nil
	case len(pe.stored) == 0:
		return errors.Unwrap(pe.err)
	}
	s.keepParts(func(tp TopicPartition) bool { return pe.failed[tp] })
	return pe
}
