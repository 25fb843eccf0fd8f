package ingest

// The decoder, the second stage: one goroutine that turns each fetched
// batch into a slot of column buffers, fanning the decode out to
// Config.Workers decoders.
//
// For each batch it runs the replay filter (replay.go), decodes batch.todo
// into a free slot's column buffers (one per worker, each filled from a
// contiguous chunk, so the buffers read in order keep every partition's
// order), forgets the messages' payloads, drops producer re-sends seen in
// the dedup window (dedup.go), names the rows (the token) and hands the
// slot, with the batch's acknowledgement, to the writer. A message that
// does not decode becomes a dead-letter row, never an error of the stage.
// The decoders, the partition states and the dedup window are the
// decoder's alone; with two slots, batch n+1 is decoded while batch n is
// written.

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
	"unsafe"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/otlpin"
	"github.com/errtrail/errtrail/parse"
	"github.com/segmentio/kafka-go"
)

// decoder is the decode stage. Its fields are touched only by its own
// goroutine, except the slot pool, which the writer feeds through the
// slots' acks.
type decoder struct {
	cfg  Config
	conn driver.Conn // the replay filter reads Config.Progress through it
	// rebalances returns the rebalances a kafka.Reader source saw since
	// the last call (its Stats); nil for other sources.
	rebalances func() int64
	flight     *inflight // batch starts, for the lag monitor; nil when lag is off
	m          *Metrics
	log        *slog.Logger
	bad        *LogLimiter // bad input
	warn       *LogLimiter // progress read retries
	slots      int         // slots in the pool: decoding and writing

	// replay filter (replay.go)
	parts map[TopicPartition]*partState
	epoch uint64 // the epoch of the last batch the replay filter saw

	// decode and dedup
	win   *window
	decs  []*parse.Decoder
	otlp  []*otlpin.Decoder // per worker, when Config.OTLP names topics
	recs  []parse.Record
	keep  []bool
	stats []workerStats
}

type workerStats struct {
	decoded int
	dead    map[parse.ErrReason]int
	otlp    otlpin.Counts
}

// newDecoder returns the decode stage of a pipeline reading src (for the
// rebalance count of a kafka.Reader) and progress through conn. cfg has its
// defaults.
func newDecoder(cfg Config, src Consumer, conn driver.Conn, flight *inflight, warn *LogLimiter) *decoder {
	d := &decoder{
		cfg: cfg, conn: conn, flight: flight, m: cfg.Metrics, log: cfg.Logger,
		bad:   NewLogLimiter(cfg.Logger, 10, 10*time.Second),
		warn:  warn,
		slots: 2,
		parts: map[TopicPartition]*partState{},
		win:   newWindow(cfg.DedupWindow),
		recs:  make([]parse.Record, cfg.Workers),
	}
	// kafka-go's Reader has no assignment callback; its rebalance counter
	// (reset by each Stats call) tells that partitions may have moved.
	if r, ok := src.(interface{ Stats() kafka.ReaderStats }); ok {
		d.rebalances = func() int64 { return r.Stats().Rebalances }
	}
	for i := 0; i < cfg.Workers; i++ {
		d.decs = append(d.decs, parse.NewDecoder(cfg.Decoder))
		if len(cfg.OTLP) > 0 {
			d.otlp = append(d.otlp, otlpin.NewDecoder(otlpin.Config{Parse: cfg.Decoder, CallerAttribute: cfg.OTLPCaller}))
		}
		d.stats = append(d.stats, workerStats{dead: map[parse.ErrReason]int{}})
	}
	return d
}

// run filters replays, decodes and drops re-sends, batch after batch, into
// slots of its pool, and hands each on to out with its ack; it runs while
// the writer writes the previous slot. It closes out when in is closed or
// on error.
func (d *decoder) run(hard context.Context, in <-chan *batch, out chan<- *slot) error {
	defer close(out)
	free := make(chan *slot, d.slots)
	for i := 0; i < d.slots; i++ {
		free <- d.newSlot()
	}
	for b := range in {
		var s *slot
		select {
		case s = <-free:
		case <-hard.Done():
			return hard.Err()
		}
		if err := d.process(hard, s, b); err != nil {
			return err
		}
		s.ack = func() {
			b.ack()
			d.release(s, free)
		}
		select {
		case out <- s:
		case <-hard.Done():
			return hard.Err()
		}
	}
	return nil
}

// process fills s from b: the replay filter, the decode, the dedup window
// and the token. It forgets b's payloads once decoded. Its only error is
// the replay filter's (a permanent progress error, or the shutdown
// deadline).
func (d *decoder) process(hard context.Context, s *slot, b *batch) error {
	s.b = b
	if d.flight != nil {
		d.flight.note(b)
	}
	if err := d.filterReplays(hard, b); err != nil {
		return err
	}
	d.decode(s, time.Now())
	b.dropPayloads()
	d.dedupAndCount(s)
	s.token = batchToken(b)
	return nil
}

// newSlot returns a slot with one column buffer per worker.
func (d *decoder) newSlot() *slot {
	s := &slot{}
	for w := 0; w < d.cfg.Workers; w++ {
		s.cols = append(s.cols, &columns{})
	}
	return s
}

// release gives s back to free once its batch is settled, or, when rows of
// it are parked (pinned: they borrow its arenas), a fresh slot in its
// place. It is called from the writer's goroutine; free has room for it.
func (d *decoder) release(s *slot, free chan<- *slot) {
	s.ack = nil // acknowledged once: a parked slot lives on without it
	if s.pinned {
		free <- d.newSlot()
		return
	}
	s.b = nil
	free <- s
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
func (d *decoder) decode(s *slot, now time.Time) {
	b := s.b
	n := len(b.todo)
	w := d.cfg.Workers
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
			d.decodeChunk(i, s.cols[i], b, b.todo[lo:hi], now.Unix())
		}()
	}
	wg.Wait()
}

func (d *decoder) decodeChunk(w int, cols *columns, b *batch, idx []int, ingested int64) {
	dec, rec, st := d.decs[w], &d.recs[w], &d.stats[w]
	cols.reset()
	st.decoded = 0
	clear(st.dead)
	st.otlp = otlpin.Counts{}
	var raw []byte
	for _, i := range idx {
		m := &b.msgs[i]
		meta := rowMeta{topic: m.Topic, partition: int32(m.Partition), offset: m.Offset,
			kafkaTimeMS: m.Time.UnixMilli(), ingestedAt: ingested}
		var err error
		if f, ok := d.cfg.OTLP[m.Topic]; ok {
			// One message, zero or more rows, all appended here, one after
			// the other: the insert keeps them in one block (insert.go).
			var c otlpin.Counts
			c, err = d.otlp[w].Decode(m.Value, kafkaHeaders(m.Headers), f, meta.kafkaTimeMS, func(index uint32, r *parse.Record, derr *parse.DecodeError) {
				meta.index = index
				cols.appendRow(&meta, r, derr, nil)
				if derr != nil {
					st.dead[derr.Reason]++
				} else {
					st.decoded++
				}
			})
			st.otlp.Errors += c.Errors
			st.otlp.OK += c.OK
			st.otlp.Other += c.Other
			if err == nil {
				continue
			}
			meta.index = 0
			rec = &d.recs[w]
			*rec = parse.Record{GRPCCode: -1, RetryAfterMS: -1, Origin: parse.OriginOTLP}
		} else {
			err = dec.DecodeMessage(m.Value, kafkaHeaders(m.Headers), meta.kafkaTimeMS, rec)
		}
		if err == nil {
			cols.appendRow(&meta, rec, nil, nil)
			st.decoded++
		} else {
			var de *parse.DecodeError
			if !errors.As(err, &de) {
				de = &parse.DecodeError{Reason: parse.ErrBadEvent, Path: "event", Offset: -1, Detail: "decoder returned an untyped error"}
			}
			raw = raw[:0]
			if d.cfg.RawMax > 0 {
				raw = d.cfg.RedactRaw(raw, m.Value, d.cfg.RawMax)
			}
			cols.appendRow(&meta, rec, de, raw)
			st.dead[de.Reason]++
			d.bad.Log(slog.LevelWarn, "message dead-lettered", "topic", m.Topic, "partition", m.Partition, "offset", m.Offset,
				"reason", string(de.Reason), "err", de.Error())
		}
	}
}

// dedupAndCount drops rows whose producer event_id is in the window (the
// first copy wins, in partition order), and accounts the batch's metrics.
func (d *decoder) dedupAndCount(s *slot) {
	resent := 0
	s.rows = 0
	for w := 0; w < s.used; w++ {
		c := s.cols[w]
		if cap(d.keep) < c.n {
			d.keep = make([]bool, c.n)
		}
		keep := d.keep[:c.n]
		drop := false
		for i := 0; i < c.n; i++ {
			keep[i] = !d.win.seen(c.eventHash[i])
			drop = drop || !keep[i]
		}
		if drop {
			before := c.n
			c.keepOnly(keep)
			resent += before - c.n
		}
		s.rows += c.n
		st := &d.stats[w]
		d.m.Decoded.Add(float64(st.decoded))
		if st.otlp != (otlpin.Counts{}) {
			d.m.OTLPItems.WithLabelValues("error").Add(float64(st.otlp.Errors))
			d.m.OTLPItems.WithLabelValues("ok").Add(float64(st.otlp.OK))
			d.m.OTLPItems.WithLabelValues("other").Add(float64(st.otlp.Other))
		}
		for r, n := range st.dead {
			d.m.DeadLetter.WithLabelValues(string(r)).Add(float64(n))
		}
	}
	if resent > 0 {
		d.m.Skipped.WithLabelValues("resent").Add(float64(resent))
	}
}
