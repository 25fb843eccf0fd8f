package ingest

// Decode, the third stage: one goroutine that fans each batch out to
// Config.Workers decoders.
//
// decodeLoop runs the replay filter on a batch, decodes batch.todo into a
// free slot's column buffers (one per worker, each filled from a contiguous
// chunk, so the buffers read in order keep every partition's order), drops
// producer re-sends seen in the dedup window and hands the slot to the
// insert stage. A message that does not decode becomes a dead-letter row,
// never an error of the stage. The decoders, the partition states and the
// dedup window belong to this goroutine alone; with two slots, batch n+1
// is decoded while batch n is inserted.

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
	"unsafe"

	"github.com/errtrail/errtrail/parse"
	"github.com/segmentio/kafka-go"
)

// slot is a decoded batch on its way to ClickHouse: the batch and the
// workers' column buffers. Two slots exist, so the next batch is decoded
// while this one is inserted; the buffers are reused when the slot returns.
type slot struct {
	b      *batch
	cols   []*columns
	used   int // workers used by this batch
	rows   int
	token  string
	pinned bool // rows of it are parked (park.go): never back to the pool, its arenas stay as they are
}

type workerStats struct {
	decoded int
	dead    map[parse.ErrReason]int
}

// decodeLoop filters replays, decodes and drops re-sends, batch after
// batch, into free slots; it runs while the insert stage writes the previous
// slot. It closes out when in is closed or on error.
func (p *Pipeline) decodeLoop(hard context.Context, in <-chan *batch, out chan<- *slot, free <-chan *slot) error {
	defer close(out)
	for b := range in {
		var s *slot
		select {
		case s = <-free:
		case <-hard.Done():
			return hard.Err()
		}
		s.b = b
		if p.flight != nil {
			p.flight.note(b)
		}
		if err := p.filterReplays(hard, b); err != nil {
			return err
		}
		p.decode(s, time.Now())
		b.dropPayloads()
		p.dedupAndCount(s)
		s.token = p.token(b)
		select {
		case out <- s:
		case <-hard.Done():
			return hard.Err()
		}
	}
	return nil
}

// kafkaHeaders converts without copying: parse.MsgHeader has kafka.Header's layout.
func kafkaHeaders(h []kafka.Header) []parse.MsgHeader {
	if len(h) == 0 {
		return nil
	}
	return unsafe.Slice((*parse.MsgHeader)(unsafe.Pointer(unsafe.SliceData(h))), len(h))
}

// decode fills the worker column buffers from b.todo, split into contiguous
// chunks (one per worker) so that concatenating the workers in order keeps
// the order of every partition.
func (p *Pipeline) decode(s *slot, now time.Time) {
	b := s.b
	n := len(b.todo)
	w := p.cfg.Workers
	if n < 1024 {
		w = 1
	}
	if w > n {
		w = max(n, 1)
	}
	s.used = w
	chunk := (n + w - 1) / w
	var wg sync.WaitGroup
	for i := 0; i < w; i++ {
		lo, hi := min(i*chunk, n), min((i+1)*chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.decodeChunk(i, s.cols[i], b, b.todo[lo:hi], now.Unix())
		}()
	}
	wg.Wait()
}

func (p *Pipeline) decodeChunk(w int, cols *columns, b *batch, idx []int, ingested int64) {
	dec, rec, st := p.decs[w], &p.recs[w], &p.stats[w]
	cols.reset()
	st.decoded = 0
	clear(st.dead)
	var raw []byte
	for _, i := range idx {
		m := &b.msgs[i]
		meta := rowMeta{topic: m.Topic, partition: int32(m.Partition), offset: m.Offset,
			kafkaTimeMS: m.Time.UnixMilli(), ingestedAt: ingested}
		err := dec.DecodeMessage(m.Value, kafkaHeaders(m.Headers), meta.kafkaTimeMS, rec)
		if err == nil {
			cols.appendRow(&meta, rec, nil, nil)
			st.decoded++
		} else {
			var de *parse.DecodeError
			if !errors.As(err, &de) {
				de = &parse.DecodeError{Reason: parse.ErrBadEvent, Path: "event", Offset: -1, Detail: "decoder returned an untyped error"}
			}
			raw = raw[:0]
			if p.cfg.RawMax > 0 {
				raw = p.cfg.RedactRaw(raw, m.Value, p.cfg.RawMax)
			}
			cols.appendRow(&meta, rec, de, raw)
			st.dead[de.Reason]++
			p.bad.Log(slog.LevelWarn, "message dead-lettered", "topic", m.Topic, "partition", m.Partition, "offset", m.Offset,
				"reason", string(de.Reason), "err", de.Error())
		}
	}
}

// dedupAndCount drops rows whose producer event_id is in the window (the
// first copy wins, in partition order), and accounts the batch's metrics.
func (p *Pipeline) dedupAndCount(s *slot) {
	resent := 0
	s.rows = 0
	for w := 0; w < s.used; w++ {
		c := s.cols[w]
		if cap(p.keep) < c.n {
			p.keep = make([]bool, c.n)
		}
		keep := p.keep[:c.n]
		drop := false
		for i := 0; i < c.n; i++ {
			keep[i] = !p.win.seen(c.eventHash[i])
			drop = drop || !keep[i]
		}
		if drop {
			before := c.n
			c.keepOnly(keep)
			resent += before - c.n
		}
		s.rows += c.n
		st := &p.stats[w]
		p.m.Decoded.Add(float64(st.decoded))
		for r, n := range st.dead {
			p.m.DeadLetter.WithLabelValues(string(r)).Add(float64(n))
		}
	}
	if resent > 0 {
		p.m.Skipped.WithLabelValues("resent").Add(float64(resent))
	}
}
