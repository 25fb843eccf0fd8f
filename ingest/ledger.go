package ingest

// Ledger decides which Kafka offsets may be committed. Batches are opened in
// fetch order with the highest offset they hold per partition; a batch is
// marked written once ClickHouse accepted it. The committable offset of a
// partition is the highest offset of the longest prefix of batches that are
// ALL written: a later batch that succeeds never carries the offset past an
// earlier one that has not (failed, or still retrying).
//
// The pipeline keeps one insert in flight, so the prefix is usually the
// batch just written; the Ledger makes the rule explicit and testable, and
// holds if inserts are ever pipelined. Not safe for concurrent use.
type Ledger struct {
	next    uint64
	pending []ledgerEntry // open batches in sequence order
	done    map[TopicPartition]int64
}

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

type ledgerEntry struct {
	seq     uint64
	max     map[TopicPartition]int64
	written bool
}

// Open registers a batch holding offsets up to max[partition] and returns
// its sequence number. max is kept; the caller must not change it.
func (l *Ledger) Open(max map[TopicPartition]int64) uint64 {
	l.next++
	l.pending = append(l.pending, ledgerEntry{seq: l.next, max: max})
	return l.next
}

// Written marks batch seq as stored and returns the partitions whose
// committable offset advanced, with the new highest stored offset (the Kafka
// commit is that offset + 1, which kafka-go adds). The map is fresh.
func (l *Ledger) Written(seq uint64) map[TopicPartition]int64 {
	for i := range l.pending {
		if l.pending[i].seq == seq {
			l.pending[i].written = true
		}
	}
	return l.advance()
}

// advance pops the written prefix of pending and returns the partitions
// whose committable offset it moved.
func (l *Ledger) advance() map[TopicPartition]int64 {
	adv := map[TopicPartition]int64{}
	n := 0
	for n < len(l.pending) && l.pending[n].written {
		for p, off := range l.pending[n].max {
			if l.done == nil {
				l.done = map[TopicPartition]int64{}
			}
			if cur, ok := l.done[p]; !ok || off > cur {
				l.done[p] = off
				adv[p] = off
			}
		}
		n++
	}
	l.pending = append(l.pending[:0], l.pending[n:]...)
	return adv
}

// Drop forgets batch seq, which will never be written (its consumer-group
// generation was abandoned, group.go) and returns what advanced, as
// Written does. Its partitions' offsets stay where written batches put
// them; the batches after it of the same generation are dropped too, so no
// commit passes a dropped message.
func (l *Ledger) Drop(seq uint64) map[TopicPartition]int64 {
	for i := range l.pending {
		if l.pending[i].seq == seq {
			l.pending = append(l.pending[:i], l.pending[i+1:]...)
			break
		}
	}
	return l.advance()
}

// Committable returns the highest stored offset of partition p and whether
// any is known.
func (l *Ledger) Committable(p TopicPartition) (int64, bool) {
	off, ok := l.done[p]
	return off, ok
}

// Open batches not yet written.
func (l *Ledger) Pending() int { return len(l.pending) }
