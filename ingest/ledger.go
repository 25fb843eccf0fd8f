package ingest

// Ledger decides which Kafka offsets may be committed. Batches are opened in
// fetch order with the highest offset they hold per partition; a batch's
// partitions are marked written once ClickHouse accepted their rows, all at
// once (Written) or some of them (WrittenParts: on a cluster the rows of a
// shard that is down are parked while the others are stored, park.go).
// The committable offset of a partition is the highest offset it has in the
// longest prefix of batches in which it is written or absent: a later batch
// that succeeds never carries a partition's offset past an earlier batch
// whose rows of that partition are not stored (failed, retrying, parked).
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
	seq       uint64
	max       map[TopicPartition]int64
	unwritten map[TopicPartition]bool // partitions of max not yet stored
}

// Open registers a batch holding offsets up to max[partition] and returns
// its sequence number. max is kept; the caller must not change it.
func (l *Ledger) Open(max map[TopicPartition]int64) uint64 {
	l.next++
	un := make(map[TopicPartition]bool, len(max))
	for p := range max {
		un[p] = true
	}
	l.pending = append(l.pending, ledgerEntry{seq: l.next, max: max, unwritten: un})
	return l.next
}

// Written marks every partition of batch seq as stored and returns the
// partitions whose committable offset advanced, with the new highest stored
// offset (the Kafka commit is that offset + 1). The map is fresh.
func (l *Ledger) Written(seq uint64) map[TopicPartition]int64 {
	if e := l.entry(seq); e != nil {
		clear(e.unwritten)
	}
	return l.advance()
}

// WrittenParts marks the given partitions of batch seq as stored and
// returns what advanced, as Written does.
func (l *Ledger) WrittenParts(seq uint64, parts []TopicPartition) map[TopicPartition]int64 {
	if e := l.entry(seq); e != nil {
		for _, p := range parts {
			delete(e.unwritten, p)
		}
	}
	return l.advance()
}

func (l *Ledger) entry(seq uint64) *ledgerEntry {
	for i := range l.pending {
		if l.pending[i].seq == seq {
			return &l.pending[i]
		}
	}
	return nil
}

// advance moves each partition's committable offset through the batches in
// order until the first that holds the partition unwritten, pops the
// batches written in full from the front, and returns what moved.
func (l *Ledger) advance() map[TopicPartition]int64 {
	adv := map[TopicPartition]int64{}
	if l.done == nil {
		l.done = map[TopicPartition]int64{}
	}
	var blocked map[TopicPartition]bool
	for i := range l.pending {
		e := &l.pending[i]
		for p, off := range e.max {
			if blocked[p] {
				continue
			}
			if e.unwritten[p] {
				if blocked == nil {
					blocked = map[TopicPartition]bool{}
				}
				blocked[p] = true
				continue
			}
			if cur, ok := l.done[p]; !ok || off > cur {
				l.done[p] = off
				adv[p] = off
			}
		}
	}
	n := 0
	for n < len(l.pending) && len(l.pending[n].unwritten) == 0 {
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
