package ingest

// Parking, on a cluster: the rows of a shard that is down wait in memory
// while the rows of the other shards are stored and committed.
//
// Every landing row goes to the shard of its Kafka partition (the cluster
// schema shards by topic and partition). With Config.Shards the writer
// sends each shard its rows itself (shards.go), so one shard down fails
// only its own rows. With a Group source as well (canPark), the rows a
// shard refused are parked instead of retried in place: the partitions
// whose rows were stored are committed (Ledger.WrittenParts), and the rows
// of the others are kept, in order, in a slot of their own, and their
// partitions are paused in the Group, so no new message of them is handed
// out (the messages wait in Kafka and in the partition reader,
// uncommitted). Rows of a parked partition that reach the writer later
// (fetched before the pause) are parked behind them. The parked rows are
// retried one partition at a time with the usual backoff, oldest first, a
// partition never before its earlier rows; once a partition has no parked
// rows left it is resumed. Without a Group source the refused rows stay in
// their slot and are retried alone.
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
	"reflect"
	"slices"
	"time"
	"unsafe"

	"github.com/segmentio/kafka-go"
)

// errParked: the slot's remaining rows were parked; it must not return to
// the pool.
var errParked = errors.New("ingest: rows parked")

// parkedSlot is a slot holding only rows of parked partitions.
type parkedSlot struct {
	s     *slot
	seq   uint64 // its batch's ledger entry
	parts map[TopicPartition]bool
}

// canPark reports whether rows may be parked (Config.Shards, a Group
// source).
func (w *writer) canPark() bool { return w.cfg.Shards != nil && w.fence != nil }

// slotParts returns the partitions of the slot's rows.
func slotParts(s *slot) map[TopicPartition]bool {
	parts := map[TopicPartition]bool{}
	for w := 0; w < s.used; w++ {
		c := s.cols[w]
		for i := 0; i < c.n; i++ {
			parts[TopicPartition{c.topic[i], c.partition[i]}] = true
		}
	}
	return parts
}

// view returns a slot with copies of s's column slices holding only the
// rows of partitions keep accepts. Its strings still point into s's arenas,
// so s must not be recycled while the view lives; a slot something was
// parked from is never recycled (pinned).
func (s *slot) view(keep func(TopicPartition) bool) *slot {
	v := &slot{b: s.b, used: s.used}
	for w := 0; w < s.used; w++ {
		v.cols = append(v.cols, s.cols[w].clone())
	}
	v.keepParts(keep)
	return v
}

// keepParts removes from s the rows of partitions keep rejects.
func (s *slot) keepParts(keep func(TopicPartition) bool) {
	s.rows = 0
	for w := 0; w < s.used; w++ {
		c := s.cols[w]
		mask := make([]bool, c.n)
		for i := range mask {
			mask[i] = keep(TopicPartition{c.topic[i], c.partition[i]})
			if mask[i] {
				s.rows++
			}
		}
		c.keepOnly(mask)
	}
	s.token = slotToken(s)
}

// clone returns c with every slice copied into new backing arrays (the
// strings are shared): keepOnly on the clone leaves c as it is. The arena
// is shared too and must not be reset through the clone.
func (c *columns) clone() *columns {
	d := *c
	v := reflect.ValueOf(&d).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() != reflect.Slice || f.IsNil() {
			continue
		}
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem() // unexported: settable through its address
		f.Set(reflect.AppendSlice(reflect.MakeSlice(f.Type(), 0, f.Len()), f))
	}
	return &d
}

// slotToken names the rows of a slot as token names a batch's: per topic
// and partition the first and last offset (the same on every retry of the
// same rows).
func slotToken(s *slot) string {
	b := &batch{}
	for w := 0; w < s.used; w++ {
		c := s.cols[w]
		for i := 0; i < c.n; i++ {
			b.msgs = append(b.msgs, kafka.Message{Topic: c.topic[i], Partition: int(c.partition[i]), Offset: c.offset[i]})
			b.todo = append(b.todo, len(b.msgs)-1)
		}
	}
	return batchToken(b)
}

// partlyStored handles an insert that some shards took (pe): the stored
// partitions are committed (with the batch's partitions that had no rows
// left to send); the rest is parked (errParked) when the source can pause
// partitions, else it stays in s to be retried alone (nil).
func (w *writer) partlyStored(hard context.Context, s *slot, seq uint64, pe *partialError) error {
	w.m.RowsInserted.Add(float64(pe.rows))
	w.m.LastInsert.SetToCurrentTime() // rows were stored: ingest is not stalled
	if !w.canPark() {
		w.commit(hard, s.b.epoch, w.ledger.WrittenParts(seq, pe.stored))
		return nil
	}
	return w.parkFailed(hard, s, seq, pe.err)
}

// parkFailed parks every row left in s after its shard refused them (err),
// pauses their partitions and commits the batch's other partitions: the
// stored ones and those without rows to send. It returns errParked. A slot
// whose rows all belong to a shard that is down must not be retried in
// place: the healthy shards' partitions would wait behind it.
func (w *writer) parkFailed(hard context.Context, s *slot, seq uint64, err error) error {
	failed := slotParts(s)
	except := w.parkedOf(seq)
	for k := range failed {
		except[k] = true
	}
	w.commit(hard, s.b.epoch, w.ledger.WrittenParts(seq, partsExcept(s.b.maxOff, except)))
	w.park(s, seq, failed)
	w.warn.Log(slog.LevelWarn, "a shard refused its rows: they are parked and their partitions paused while the other partitions go on",
		"parked_partitions", len(failed), "parked_rows", s.rows, "class", Classify(err), "err", err)
	return errParked
}

// park keeps s (rows of parts only) for later, pins it and pauses parts.
func (w *writer) park(s *slot, seq uint64, parts map[TopicPartition]bool) {
	s.pinned = true
	own := &batch{epoch: s.b.epoch, staleProgress: maps.Clone(s.b.staleProgress)}
	s.b = own
	w.parked = append(w.parked, &parkedSlot{s: s, seq: seq, parts: maps.Clone(parts)})
	if w.parkNext.IsZero() {
		w.parkNext = time.Now().Add(w.parkDelay())
	}
	for k := range parts {
		if w.held == nil {
			w.held = map[TopicPartition]int{}
		}
		if w.held[k] == 0 {
			w.fence.pause(own.epoch, k)
		}
		w.held[k]++
	}
	w.m.ParkedRows.Add(float64(s.rows))
}

// unhold forgets one parked slot's claim on k and resumes k when none is
// left.
func (w *writer) unhold(epoch uint64, k TopicPartition) {
	w.held[k]--
	if w.held[k] <= 0 {
		delete(w.held, k)
		w.fence.resume(epoch, k)
	}
}

// parkHeld moves the rows of held partitions of a new slot behind the
// parked ones: the other rows are returned in a view to insert now, and s
// itself is parked with the held rows. It returns s unchanged when none of
// its rows is held.
func (w *writer) parkHeld(s *slot, seq uint64) *slot {
	held := map[TopicPartition]bool{}
	for k := range slotParts(s) {
		if w.held[k] > 0 {
			held[k] = true
		}
	}
	if len(held) == 0 {
		return s
	}
	rest := s.view(func(tp TopicPartition) bool { return !held[tp] })
	s.keepParts(func(tp TopicPartition) bool { return held[tp] })
	w.park(s, seq, held)
	return rest
}

// retryParked tries the parked slots in order, each partition only when no
// earlier parked slot still holds it.
func (w *writer) retryParked(hard context.Context) error {
	earlier := map[TopicPartition]bool{}
	kept := w.parked[:0]
	for _, ps := range w.parked {
		if done, err := w.retryOne(hard, ps, earlier); err != nil {
			return err
		} else if done {
			continue
		}
		for k := range ps.parts {
			earlier[k] = true
		}
		kept = append(kept, ps)
	}
	clear(w.parked[len(kept):])
	w.parked = kept
	if len(w.parked) > 0 {
		w.parkTries++
		w.parkNext = time.Now().Add(w.parkDelay())
	} else {
		w.parkTries, w.parkNext = 0, time.Time{}
	}
	return nil
}

// retryOne tries the partitions of ps that no earlier slot holds and
// reports whether ps is done (stored, or dropped with its generation).
func (w *writer) retryOne(hard context.Context, ps *parkedSlot, earlier map[TopicPartition]bool) (bool, error) {
	epoch := ps.s.b.epoch
	if _, done, ok := w.fence.attempt(epoch); ok {
		done()
	} else {
		w.dropParked(hard, ps)
		return true, nil
	}
	var stored []TopicPartition
	for _, k := range sortedParts(ps.parts) {
		if earlier[k] {
			continue
		}
		v := ps.s.view(func(tp TopicPartition) bool { return tp == k })
		err := w.fencedAttempt(hard, v, w.settingsFor(v.token), 0)
		switch {
		case errors.Is(err, errAbandoned):
			w.dropParked(hard, ps)
			return true, nil
		case err != nil:
			w.warn.Log(slog.LevelWarn, "parked rows still cannot be stored; keeping them", "topic", k.Topic,
				"partition", k.Partition, "class", Classify(err), "err", err)
			continue
		}
		stored = append(stored, k)
		w.m.RowsInserted.Add(float64(v.rows))
		w.m.ParkedRows.Sub(float64(v.rows))
		delete(ps.parts, k)
		w.unhold(epoch, k)
	}
	if len(stored) > 0 {
		w.m.LastInsert.SetToCurrentTime()
		w.log.Info("parked rows stored", "partitions", len(stored))
		left := ps.parts
		ps.s.keepParts(func(tp TopicPartition) bool { return left[tp] })
		w.commit(hard, epoch, w.ledger.WrittenParts(ps.seq, stored))
	}
	return len(ps.parts) == 0, nil
}

// dropParked drops a parked slot whose generation was abandoned: uncommitted,
// for the partitions' next owner.
func (w *writer) dropParked(hard context.Context, ps *parkedSlot) {
	w.m.Abandoned.Add(float64(ps.s.rows))
	w.m.ParkedRows.Sub(float64(ps.s.rows))
	for k := range ps.parts {
		w.held[k]--
		if w.held[k] <= 0 {
			delete(w.held, k)
		}
	}
	w.commit(hard, ps.s.b.epoch, w.ledger.Drop(ps.seq))
}

// parkedOf returns the partitions parked from batch seq.
func (w *writer) parkedOf(seq uint64) map[TopicPartition]bool {
	out := map[TopicPartition]bool{}
	for _, ps := range w.parked {
		if ps.seq == seq {
			for k := range ps.parts {
				out[k] = true
			}
		}
	}
	return out
}

// partsExcept returns the partitions of max not in except.
func partsExcept(max map[TopicPartition]int64, except map[TopicPartition]bool) []TopicPartition {
	var out []TopicPartition
	for k := range max {
		if !except[k] {
			out = append(out, k)
		}
	}
	return out
}

// purgeParked drops the parked slots of generations before epoch: a batch
// of a newer generation means the old one ended without settling, so it was
// abandoned (group.go).
func (w *writer) purgeParked(hard context.Context, epoch uint64) {
	kept := w.parked[:0]
	for _, ps := range w.parked {
		if ps.s.b.epoch < epoch {
			w.dropParked(hard, ps)
			continue
		}
		kept = append(kept, ps)
	}
	clear(w.parked[len(kept):])
	w.parked = kept
	if len(w.parked) == 0 {
		w.parkTries, w.parkNext = 0, time.Time{}
	}
}

// parkDelay is the wait before the next retry of the parked rows.
func (w *writer) parkDelay() time.Duration { return w.cfg.Backoff.Delay(w.parkTries, nil) }

// settingsFor returns the insert settings for a token.
func (w *writer) settingsFor(token string) map[string]any {
	if w.cfg.InsertSettings == nil {
		return nil
	}
	return w.cfg.InsertSettings(token)
}

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
