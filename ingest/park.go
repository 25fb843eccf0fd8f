package ingest

// Parking, on a cluster: the rows of a shard that is down wait in memory
// while the rows of the other shards are stored and committed.
//
// Every landing row goes to the shard of its Kafka partition (the cluster
// schema shards by topic and partition). With Config.Shards the writer
// sends each shard its rows itself (shards.go), so one shard down fails
// only its own rows. With a Group source as well, the writer has a park
// lot (parkLot), and the rows a shard refused go to it instead of being
// retried in place: the partitions whose rows were stored are committed
// (Ledger.WrittenParts), and the rows of the others are kept, in order, in
// a slot of their own, and their partitions are paused in the Group, so no
// new message of them is handed out (the messages wait in Kafka and in the
// partition reader, uncommitted). Rows of a parked partition that reach
// the writer later (fetched before the pause) are held back behind them.
// The parked rows are retried one partition at a time with the usual
// backoff, oldest first, a partition never before its earlier rows; once a
// partition has no parked rows left it is resumed. Without a Group source
// there is no lot: the refused rows stay in their slot and are retried
// alone (insert.go).
//
// The lot owns the parked slots, the count of parked slots holding each
// partition (the paused ones) and the retry's backoff. The writer hands it
// rows (park: what a shard refused; holdBack: a new slot's rows of paused
// partitions), asks which partitions of a batch it holds (partsOf, for the
// commit) and when to retry (due, retry). The lot decides alone what is
// tried when, and pauses and resumes the partitions; of the writer it asks
// only an insert attempt and the settling of a batch's partitions in the
// ledger and Kafka (parkSink).
//
// A slot rows were parked from is pinned: the parked rows borrow its
// arenas, so its ack gives the decoder a fresh slot in its place, and the
// parked slot keeps a copy of its batch's epoch and stale-progress marks
// (the batch itself goes back to the fetcher).
//
// Nothing changes for the delivery guarantees: an offset is committed only
// when every earlier row of its partition is stored, a partition's rows are
// stored in offset order, and what is parked at a stop or a rebalance is
// simply not committed (it is fetched again by the next owner). Memory is
// bounded by the batches in flight when a pause takes effect.

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"time"
)

// errParked: the slot's remaining rows were parked; it must not return to
// the pool.
var errParked = errors.New("ingest: rows parked")

// parkSink is what the park lot asks of the writer. Its methods are called
// from the writer's goroutine, inside parkLot.retry and parkLot.expire.
type parkSink interface {
	// attemptParked makes one insert attempt of v's rows and returns nil
	// when they were stored, errAbandoned when their generation was
	// abandoned, else the error that refused them.
	attemptParked(hard context.Context, v *slot) error
	// storedParked marks parts of batch seq stored and commits what the
	// ledger then allows, through the generation of epoch.
	storedParked(hard context.Context, epoch, seq uint64, parts []TopicPartition)
	// droppedParked forgets batch seq, dropped uncommitted with its
	// generation, and commits what the ledger then allows.
	droppedParked(hard context.Context, epoch, seq uint64)
}

// parkedSlot is a slot holding only rows of parked partitions.
type parkedSlot struct {
	s     *slot
	seq   uint64 // its batch's ledger entry
	parts map[TopicPartition]bool
}

// parkLot holds the parked rows of a writer. Not safe for concurrent use:
// only the writer's goroutine touches it. A nil lot parks nothing.
type parkLot struct {
	fence   fenced // pauses and resumes partitions; asked whether a generation may still be written
	backoff Backoff
	m       *Metrics
	log     *slog.Logger
	warn    *LogLimiter

	slots []*parkedSlot          // in fetch order
	held  map[TopicPartition]int // parked slots holding rows of each partition; paused while > 0
	tries int                    // retries since the last one that emptied the lot
	next  time.Time              // when the parked rows are retried next
}

func newParkLot(fence fenced, backoff Backoff, m *Metrics, log *slog.Logger, warn *LogLimiter) *parkLot {
	return &parkLot{fence: fence, backoff: backoff, m: m, log: log, warn: warn}
}

// len returns the number of parked slots.
func (l *parkLot) len() int {
	if l == nil {
		return 0
	}
	return len(l.slots)
}

// due returns when the parked rows are to be retried, and false when
// nothing is parked.
func (l *parkLot) due() (time.Time, bool) {
	if l.len() == 0 {
		return time.Time{}, false
	}
	return l.next, true
}

// park keeps s, batch seq's rows that are to wait, pins it and pauses the
// partitions of its rows that no parked slot held yet. It returns how many
// partitions s holds.
func (l *parkLot) park(s *slot, seq uint64) int {
	parts := slotParts(s)
	s.pinned = true
	own := &batch{epoch: s.b.epoch, staleProgress: maps.Clone(s.b.staleProgress)}
	s.b = own
	l.slots = append(l.slots, &parkedSlot{s: s, seq: seq, parts: parts})
	if l.next.IsZero() {
		l.next = time.Now().Add(l.delay())
	}
	if l.held == nil {
		l.held = map[TopicPartition]int{}
	}
	for k := range parts {
		if l.held[k] == 0 {
			l.fence.pause(own.epoch, k)
		}
		l.held[k]++
	}
	l.m.ParkedRows.Add(float64(s.rows))
	return len(parts)
}

// holdBack parks the rows of s (batch seq) of partitions the lot holds,
// behind the rows parked before them, and returns a view of the other rows
// to insert now; it returns s itself when none of its rows is held.
func (l *parkLot) holdBack(s *slot, seq uint64) *slot {
	if l == nil || len(l.held) == 0 || s.rows == 0 {
		return s
	}
	held := map[TopicPartition]bool{}
	for k := range slotParts(s) {
		if l.held[k] > 0 {
			held[k] = true
		}
	}
	if len(held) == 0 {
		return s
	}
	rest := s.view(func(tp TopicPartition) bool { return !held[tp] })
	s.keepParts(func(tp TopicPartition) bool { return held[tp] })
	l.park(s, seq)
	return rest
}

// partsOf returns the partitions of batch seq the lot holds (nil when
// none).
func (l *parkLot) partsOf(seq uint64) map[TopicPartition]bool {
	if l == nil {
		return nil
	}
	var out map[TopicPartition]bool
	for _, ps := range l.slots {
		if ps.seq != seq {
			continue
		}
		if out == nil {
			out = map[TopicPartition]bool{}
		}
		for k := range ps.parts {
			out[k] = true
		}
	}
	return out
}

// expire drops the parked slots of generations before epoch: a batch of a
// newer generation means the old one ended without settling, so it was
// abandoned (group.go) and the partitions' next owner stores its rows.
func (l *parkLot) expire(hard context.Context, epoch uint64, out parkSink) {
	if l.len() == 0 {
		return
	}
	kept := l.slots[:0]
	for _, ps := range l.slots {
		if ps.s.b.epoch < epoch {
			l.drop(hard, ps, out)
			continue
		}
		kept = append(kept, ps)
	}
	l.keep(kept)
	if len(l.slots) == 0 {
		l.tries, l.next = 0, time.Time{}
	}
}

// retry tries the parked slots in order, each partition only when no
// earlier parked slot still holds it, resumes each partition whose last
// parked rows were stored, and sets the next retry after the backoff if
// rows are left.
func (l *parkLot) retry(hard context.Context, out parkSink) {
	earlier := map[TopicPartition]bool{}
	kept := l.slots[:0]
	for _, ps := range l.slots {
		if l.retryOne(hard, ps, earlier, out) {
			continue
		}
		for k := range ps.parts {
			earlier[k] = true
		}
		kept = append(kept, ps)
	}
	l.keep(kept)
	if len(l.slots) > 0 {
		l.tries++
		l.next = time.Now().Add(l.delay())
	} else {
		l.tries, l.next = 0, time.Time{}
	}
}

// retryOne tries the partitions of ps that no earlier slot holds and
// reports whether ps is done (stored, or dropped with its generation).
func (l *parkLot) retryOne(hard context.Context, ps *parkedSlot, earlier map[TopicPartition]bool, out parkSink) bool {
	epoch := ps.s.b.epoch
	if _, done, ok := l.fence.attempt(epoch); ok {
		done()
	} else {
		l.drop(hard, ps, out)
		return true
	}
	var stored []TopicPartition
	for _, k := range sortedParts(ps.parts) {
		if earlier[k] {
			continue
		}
		v := ps.s.view(func(tp TopicPartition) bool { return tp == k })
		err := out.attemptParked(hard, v)
		switch {
		case errors.Is(err, errAbandoned):
			l.drop(hard, ps, out)
			return true
		case err != nil:
			l.warn.Log(slog.LevelWarn, "parked rows still cannot be stored; keeping them", "topic", k.Topic,
				"partition", k.Partition, "class", Classify(err), "err", err)
			continue
		}
		stored = append(stored, k)
		l.m.RowsInserted.Add(float64(v.rows))
		l.m.ParkedRows.Sub(float64(v.rows))
		delete(ps.parts, k)
		l.unhold(epoch, k)
	}
	if len(stored) > 0 {
		l.m.LastInsert.SetToCurrentTime()
		l.log.Info("parked rows stored", "partitions", len(stored))
		left := ps.parts
		ps.s.keepParts(func(tp TopicPartition) bool { return left[tp] })
		out.storedParked(hard, epoch, ps.seq, stored)
	}
	return len(ps.parts) == 0
}

// unhold forgets one parked slot's claim on k and resumes k when none is
// left.
func (l *parkLot) unhold(epoch uint64, k TopicPartition) {
	l.held[k]--
	if l.held[k] <= 0 {
		delete(l.held, k)
		l.fence.resume(epoch, k)
	}
}

// drop forgets a parked slot whose generation was abandoned: uncommitted,
// for the partitions' next owner. Its partitions are not resumed (the
// generation that paused them is gone).
func (l *parkLot) drop(hard context.Context, ps *parkedSlot, out parkSink) {
	l.m.Abandoned.Add(float64(ps.s.rows))
	l.m.ParkedRows.Sub(float64(ps.s.rows))
	for k := range ps.parts {
		l.held[k]--
		if l.held[k] <= 0 {
			delete(l.held, k)
		}
	}
	out.droppedParked(hard, ps.s.b.epoch, ps.seq)
}

// keep makes kept the parked slots; kept shares l.slots' backing array, whose
// tail is cleared so that the slots left behind can be collected.
func (l *parkLot) keep(kept []*parkedSlot) {
	clear(l.slots[len(kept):])
	l.slots = kept
}

// delay is the wait before the next retry of the parked rows.
func (l *parkLot) delay() time.Duration { return l.backoff.Delay(l.tries, nil) }

func sortedParts(parts map[TopicPartition]bool) []TopicPartition {
	return slices.SortedFunc(maps.Keys(parts), func(a, b TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition) - int(b.Partition)
	})
}
