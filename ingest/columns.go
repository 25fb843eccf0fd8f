package ingest

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/cespare/xxhash/v2"
	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/schema"
)

// LandingColumns is the column list of the INSERT, in the order the column
// buffers are appended: schema.LandingColumns, from which the buffers and
// the code filling them are generated (columns_gen.go, go generate ./schema).
var LandingColumns = func() []string {
	out := make([]string, len(schema.LandingColumns))
	for i, c := range schema.LandingColumns {
		out[i] = c.Name
	}
	return out
}()

// insertInto is the INSERT of a batch into table (landing, or a shard's
// landing_local).
func insertInto(table string) string { return schema.InsertInto(table) }

// arena holds the bytes of the strings in one columns value. Strings it
// returns point into its chunks and stay valid until reset; reset keeps the
// chunks, so steady state allocates nothing.
type arena struct {
	chunks [][]byte
	cur    int
}

const arenaChunk = 1 << 20

func (a *arena) str(s string) string {
	if s == "" {
		return ""
	}
	return a.bytes([]byte(s)) // no copy: the compiler elides the conversion for the copy below
}

func (a *arena) bytes(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	for {
		if a.cur < len(a.chunks) {
			c := a.chunks[a.cur]
			if cap(c)-len(c) >= n {
				off := len(c)
				c = append(c, b...)
				a.chunks[a.cur] = c
				return unsafe.String(&c[off], n)
			}
			if a.cur+1 < len(a.chunks) {
				a.cur++
				continue
			}
		}
		size := arenaChunk
		if n > size {
			size = n
		}
		a.chunks = append(a.chunks, make([]byte, 0, size))
		a.cur = len(a.chunks) - 1
	}
}

// TextMax bounds the free text stored per value: errors.message and each
// of violation_descriptions. A longer text (a reply may carry up to the
// 1 MiB message limit) is cut at a UTF-8 boundary and ends in a marker
// that gives its full length, within TextMax bytes in all: a stack trace
// or an echoed request is worth its first 8 KiB to a reader, and storing
// the rest costs every view, merge and support lookup that touches it.
const TextMax = 8 << 10

// StoredText returns s as ingest stores it: unchanged up to TextMax bytes,
// else its head and a marker.
func StoredText(s string) string {
	if len(s) <= TextMax {
		return s
	}
	marker := "…[truncated: " + strconv.Itoa(len(s)) + " bytes in all]"
	cut := TextMax - len(marker)
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + marker
}

// text copies free text into the arena, capped by StoredText.
func (a *arena) text(s string) string {
	if len(s) <= TextMax {
		return a.str(s)
	}
	return a.str(StoredText(s)) // rare: the allocation of the capped copy is not worth avoiding
}

func (a *arena) reset() {
	for i := range a.chunks {
		a.chunks[i] = a.chunks[i][:0]
	}
	a.cur = 0
}

// rowMeta is what a row needs beyond the Record: where it came from.
type rowMeta struct {
	topic       string // owned by the caller for the life of the batch
	partition   int32
	offset      int64
	index       uint32 // the record's place in its message (OTLP: many records per message)
	kafkaTimeMS int64
	ingestedAt  int64 // Unix seconds
}

// The helpers of RowColumn.Ingest: each returns one row's value of a
// column, without allocating in steady state.

// eventIDOf is the row's event_id: the producer's, copied, or else the
// Kafka coordinates ("kafka:<topic>/<partition>/<offset>[/<index>]"). It
// also appends the row's dedup hash (eventHash), 0 without a producer id.
func (c *columns) eventIDOf(m *rowMeta, rec *parse.Record) string {
	if rec.EventID != "" {
		id := c.ar.str(rec.EventID)
		c.eventHash = append(c.eventHash, xxhash.Sum64String(id)|1) // never 0
		return id
	}
	var buf [160]byte
	b := append(buf[:0], "kafka:"...)
	b = append(b, m.topic...)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(m.partition), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, m.offset, 10)
	if m.index > 0 {
		b = append(b, '/')
		b = strconv.AppendUint(b, uint64(m.index), 10)
	}
	c.eventHash = append(c.eventHash, 0)
	return c.ar.bytes(b)
}

// observedMS is when the reply was observed, Unix milliseconds: the
// record's time, else the message's Kafka time, never negative.
func observedMS(m *rowMeta, rec *parse.Record) int64 {
	obs := rec.ObservedAtMS
	if obs <= 0 {
		obs = m.kafkaTimeMS
	}
	return max(obs, 0)
}

func flag(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// tri stores a parse.Tri as retryable does: 1 true, 0 false, -1 unknown.
func tri(t parse.Tri) int8 {
	switch t {
	case parse.TriTrue:
		return 1
	case parse.TriFalse:
		return 0
	}
	return -1
}

// The arrays are sub-slices of c.flat, capped so that a later append to
// flat never writes into them.

func (c *columns) violationFieldsOf(vs []parse.FieldViolation) []string {
	start := len(c.flat)
	for _, v := range vs {
		c.flat = append(c.flat, c.ar.str(v.Field))
	}
	return c.flat[start:len(c.flat):len(c.flat)]
}

func (c *columns) violationDescriptionsOf(vs []parse.FieldViolation) []string {
	start := len(c.flat)
	for _, v := range vs {
		c.flat = append(c.flat, c.ar.text(v.Description))
	}
	return c.flat[start:len(c.flat):len(c.flat)]
}

func (c *columns) findingsOf(fs []parse.Finding) []string {
	start := len(c.flat)
	for _, f := range fs {
		c.flat = append(c.flat, string(f)) // parse's constants
	}
	return c.flat[start:len(c.flat):len(c.flat)]
}

func (c *columns) inferredOf(fs []string) []string {
	start := len(c.flat)
	for _, f := range fs {
		c.flat = append(c.flat, c.ar.str(f))
	}
	return c.flat[start:len(c.flat):len(c.flat)]
}

// dlReason, dlError and raw are a dead-letter row's; "" in a decoded row.
func dlReason(derr *parse.DecodeError) string {
	if derr == nil {
		return ""
	}
	return string(derr.Reason) // a constant
}

func (a *arena) dlError(derr *parse.DecodeError) string {
	if derr == nil {
		return ""
	}
	return a.str(derr.Error())
}

func (a *arena) raw(derr *parse.DecodeError, raw []byte) string {
	if derr == nil {
		return ""
	}
	return a.bytes(raw)
}

func clampU16(v int) uint16 {
	switch {
	case v < 0:
		return 0
	case v > 65535:
		return 65535
	}
	return uint16(v)
}

// appendTo appends rows [lo, hi) of every column of c to the driver batch
// b, column by column. The driver copies the values, so c may be reset
// afterwards.
func (c *columns) appendTo(b driver.Batch, lo, hi int) error {
	var buf [64]any // on the stack: room for every column
	cols := c.slices(buf[:0], lo, hi)
	if len(cols) != len(LandingColumns) {
		return fmt.Errorf("ingest: %d column buffers for %d landing columns", len(cols), len(LandingColumns))
	}
	for i, v := range cols {
		col := b.Column(i)
		if rows, ok := v.([][]string); ok {
			// The driver appends a [][]string by reflection, with
			// an allocation per row; a []string row takes its
			// typed path, and the empty rows (most of them) share
			// one boxed value.
			for _, r := range rows {
				var row any = noStrings
				if len(r) > 0 {
					row = r
				}
				if err := col.AppendRow(row); err != nil {
					return &columnError{column: LandingColumns[i], err: err}
				}
			}
			continue
		}
		if err := col.Append(v); err != nil {
			return &columnError{column: LandingColumns[i], err: err}
		}
	}
	return nil
}

// noStrings is the empty array row, boxed once.
var noStrings any = []string{}

// columnError says which column the driver refused: a schema mismatch.
type columnError struct {
	column string
	err    error
}

func (e *columnError) Error() string { return "ingest: column " + e.column + ": " + e.err.Error() }
func (e *columnError) Unwrap() error { return e.err }

// blockEnd is the end of the insert block that starts at row lo: step rows
// on, extended past the rows of the same Kafka message (an OTLP message
// makes several), so that a block boundary never splits a message. The
// server writes an insert's blocks into parts whole, so a message is then
// stored whole or not at all, as the replay filter (by offset) assumes.
func (c *columns) blockEnd(lo, step int) int {
	hi := min(lo+max(step, 1), c.n)
	for hi < c.n && c.offset[hi] == c.offset[hi-1] && c.partition[hi] == c.partition[hi-1] && c.topic[hi] == c.topic[hi-1] {
		hi++
	}
	return hi
}
