package ingest

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/cespare/xxhash/v2"
	"github.com/errtrail/errtrail/parse"
)

// LandingColumns is the column list of the INSERT, in the order the column
// buffers are appended. It must name every column of the `landing` table
// that ingest fills; CheckLanding compares it with the schema at start-up.
var LandingColumns = []string{
	"dead", "event_id", "observed_at", "observed_at_ms", "ingested_at",
	"kafka_topic", "kafka_partition", "kafka_offset",
	"source_kind", "source_id", "agent", "endpoint", "caller", "method", "attempt",
	"http_request_id", "jsonrpc_id", "message_id", "task_id", "idempotency_key_hash",
	"protocol", "binding", "envelope", "http_status", "grpc_status", "jsonrpc_code",
	"code", "reason", "domain", "kind", "typed",
	"retryable", "retryable_source", "retry_after_ms", "retry_after_source",
	"limit_name", "scope", "error_id", "request_id", "message",
	"violation_fields", "violation_descriptions", "findings",
	"dl_reason", "dl_error", "raw", "source_version",
	"trace_id", "span_id", "origin", "inferred", "kafka_index",
}

// CheckColumns reports a difference between the landing table's columns
// as the schema declares them and the buffers ingest fills, so a mismatch
// stops start-up instead of the first insert.
func CheckColumns(names []string) error {
	if len(names) != len(LandingColumns) {
		return fmt.Errorf("ingest: schema has %d landing columns, ingest fills %d", len(names), len(LandingColumns))
	}
	for i, n := range names {
		if n != LandingColumns[i] {
			return fmt.Errorf("ingest: landing column %d is %q in the schema and %q in ingest", i, n, LandingColumns[i])
		}
	}
	return nil
}

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

// columns is one worker's share of a batch, one slice per landing column.
// Strings are borrowed from ar (see arena); arrays are sub-slices of flat.
type columns struct {
	ar   arena
	flat []string
	n    int

	dead                                     []uint8
	eventID                                  []string
	observedAt                               []int64 // seconds
	observedAtMS                             []uint64
	ingestedAt                               []int64
	topic                                    []string
	partition                                []int32
	offset                                   []int64
	sourceKind, sourceID, agent, endpoint    []string
	caller, method                           []string
	attempt                                  []uint16
	httpRequestID, jsonrpcID, messageID      []string
	taskID                                   []string
	idemHash                                 []uint64
	protocol, binding, envelope              []string
	httpStatus                               []uint16
	grpcStatus                               []string
	jsonrpcCode                              []int32
	code, reason, domain, kind               []string
	typed                                    []uint8
	retryable                                []int8
	retryableSource                          []string
	retryAfterMS                             []int64
	retryAfterSource, limit, scope           []string
	errorID, requestID, message              []string
	violationFields, violationDescs, finding [][]string
	dlReason, dlError, raw                   []string
	traceID, spanID, origin                  []string
	inferred                                 [][]string
	kafkaIndex                               []uint32
	sourceVersion                            []string // migration 008

	// eventHash is not a column: it is the dedup key of each row (0 when
	// the producer sent no event_id).
	eventHash []uint64
}

func (c *columns) reset() {
	c.ar.reset()
	c.flat = c.flat[:0]
	c.n = 0
	c.dead = c.dead[:0]
	c.eventID = c.eventID[:0]
	c.observedAt = c.observedAt[:0]
	c.observedAtMS = c.observedAtMS[:0]
	c.ingestedAt = c.ingestedAt[:0]
	c.topic = c.topic[:0]
	c.partition = c.partition[:0]
	c.offset = c.offset[:0]
	c.sourceKind, c.sourceID, c.agent, c.endpoint = c.sourceKind[:0], c.sourceID[:0], c.agent[:0], c.endpoint[:0]
	c.caller, c.method = c.caller[:0], c.method[:0]
	c.attempt = c.attempt[:0]
	c.httpRequestID, c.jsonrpcID, c.messageID, c.taskID = c.httpRequestID[:0], c.jsonrpcID[:0], c.messageID[:0], c.taskID[:0]
	c.idemHash = c.idemHash[:0]
	c.protocol, c.binding, c.envelope = c.protocol[:0], c.binding[:0], c.envelope[:0]
	c.httpStatus = c.httpStatus[:0]
	c.grpcStatus = c.grpcStatus[:0]
	c.jsonrpcCode = c.jsonrpcCode[:0]
	c.code, c.reason, c.domain, c.kind = c.code[:0], c.reason[:0], c.domain[:0], c.kind[:0]
	c.typed = c.typed[:0]
	c.retryable = c.retryable[:0]
	c.retryableSource = c.retryableSource[:0]
	c.retryAfterMS = c.retryAfterMS[:0]
	c.retryAfterSource, c.limit, c.scope = c.retryAfterSource[:0], c.limit[:0], c.scope[:0]
	c.errorID, c.requestID, c.message = c.errorID[:0], c.requestID[:0], c.message[:0]
	c.violationFields, c.violationDescs, c.finding = c.violationFields[:0], c.violationDescs[:0], c.finding[:0]
	c.dlReason, c.dlError, c.raw = c.dlReason[:0], c.dlError[:0], c.raw[:0]
	c.traceID, c.spanID, c.origin = c.traceID[:0], c.spanID[:0], c.origin[:0]
	c.inferred, c.kafkaIndex = c.inferred[:0], c.kafkaIndex[:0]
	c.sourceVersion = c.sourceVersion[:0]
	c.eventHash = c.eventHash[:0]
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

// appendRow adds one landing row. rec's strings are copied into the arena,
// except the values of parse's enumerated types (Protocol, Binding,
// Envelope, Kind, the two Source types, Finding), which are always parse's
// constants and so outlive the Decoder's buffers;
// derr is nil for a decoded row and the decode failure for a dead-letter row,
// raw the redacted bytes kept for a dead-letter row.
func (c *columns) appendRow(m *rowMeta, rec *parse.Record, derr *parse.DecodeError, raw []byte) {
	c.n++
	a := &c.ar
	if derr != nil {
		c.dead = append(c.dead, 1)
	} else {
		c.dead = append(c.dead, 0)
	}
	if rec.EventID != "" {
		id := a.str(rec.EventID)
		c.eventID = append(c.eventID, id)
		c.eventHash = append(c.eventHash, xxhash.Sum64String(id)|1) // never 0
	} else {
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
		c.eventID = append(c.eventID, a.bytes(b))
		c.eventHash = append(c.eventHash, 0)
	}
	obs := rec.ObservedAtMS
	if obs <= 0 {
		obs = m.kafkaTimeMS
	}
	if obs < 0 {
		obs = 0
	}
	c.observedAt = append(c.observedAt, obs/1000)
	c.observedAtMS = append(c.observedAtMS, uint64(obs))
	c.ingestedAt = append(c.ingestedAt, m.ingestedAt)
	c.topic = append(c.topic, m.topic)
	c.partition = append(c.partition, m.partition)
	c.offset = append(c.offset, m.offset)
	c.sourceKind = append(c.sourceKind, a.str(rec.SourceKind))
	c.sourceID = append(c.sourceID, a.str(rec.SourceID))
	c.sourceVersion = append(c.sourceVersion, a.str(rec.SourceVersion))
	c.agent = append(c.agent, a.str(rec.Agent))
	c.endpoint = append(c.endpoint, a.str(rec.Endpoint))
	c.caller = append(c.caller, a.str(rec.Caller))
	c.method = append(c.method, a.str(rec.Method))
	c.attempt = append(c.attempt, clampU16(rec.Attempt))
	c.httpRequestID = append(c.httpRequestID, a.str(rec.HTTPRequestID))
	c.jsonrpcID = append(c.jsonrpcID, a.str(rec.JSONRPCID))
	c.messageID = append(c.messageID, a.str(rec.MessageID))
	c.taskID = append(c.taskID, a.str(rec.TaskID))
	c.idemHash = append(c.idemHash, rec.IdempotencyHash) // keyed by the decoder; 0: none
	c.protocol = append(c.protocol, string(rec.Protocol))
	c.binding = append(c.binding, string(rec.Binding))
	c.envelope = append(c.envelope, string(rec.Envelope))
	c.httpStatus = append(c.httpStatus, clampU16(rec.HTTPStatus))
	c.grpcStatus = append(c.grpcStatus, rec.GRPCStatusName()) // static table string
	c.jsonrpcCode = append(c.jsonrpcCode, int32(rec.JSONRPCCode))
	c.code = append(c.code, a.str(rec.Code))
	c.reason = append(c.reason, a.str(rec.Reason))
	c.domain = append(c.domain, a.str(rec.Domain))
	c.kind = append(c.kind, string(rec.Kind))
	if rec.Typed {
		c.typed = append(c.typed, 1)
	} else {
		c.typed = append(c.typed, 0)
	}
	switch rec.Retryable {
	case parse.TriTrue:
		c.retryable = append(c.retryable, 1)
	case parse.TriFalse:
		c.retryable = append(c.retryable, 0)
	default:
		c.retryable = append(c.retryable, -1)
	}
	c.retryableSource = append(c.retryableSource, string(rec.RetryableSource))
	ra := rec.RetryAfterMS
	if ra < 0 {
		ra = -1
	}
	c.retryAfterMS = append(c.retryAfterMS, ra)
	c.retryAfterSource = append(c.retryAfterSource, string(rec.RetryAfterSource))
	c.limit = append(c.limit, a.str(rec.Limit))
	c.scope = append(c.scope, a.str(rec.Scope))
	c.errorID = append(c.errorID, a.str(rec.ErrorID))
	c.requestID = append(c.requestID, a.str(rec.RequestID))
	c.message = append(c.message, a.text(rec.Message))

	start := len(c.flat)
	for _, v := range rec.FieldViolations {
		c.flat = append(c.flat, a.str(v.Field))
	}
	c.violationFields = append(c.violationFields, c.flat[start:len(c.flat):len(c.flat)])
	start = len(c.flat)
	for _, v := range rec.FieldViolations {
		c.flat = append(c.flat, a.text(v.Description))
	}
	c.violationDescs = append(c.violationDescs, c.flat[start:len(c.flat):len(c.flat)])
	start = len(c.flat)
	for _, f := range rec.Findings {
		c.flat = append(c.flat, string(f))
	}
	c.finding = append(c.finding, c.flat[start:len(c.flat):len(c.flat)])
	start = len(c.flat)
	for _, f := range rec.Inferred {
		c.flat = append(c.flat, a.str(f))
	}
	c.inferred = append(c.inferred, c.flat[start:len(c.flat):len(c.flat)])
	c.traceID = append(c.traceID, a.str(rec.TraceID))
	c.spanID = append(c.spanID, a.str(rec.SpanID))
	c.origin = append(c.origin, string(rec.Origin)) // parse's constants
	c.kafkaIndex = append(c.kafkaIndex, m.index)

	if derr != nil {
		c.dlReason = append(c.dlReason, string(derr.Reason)) // constant
		c.dlError = append(c.dlError, a.str(derr.Error()))
		c.raw = append(c.raw, a.bytes(raw))
	} else {
		c.dlReason = append(c.dlReason, "")
		c.dlError = append(c.dlError, "")
		c.raw = append(c.raw, "")
	}
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

// slices appends to dst rows [lo, hi) of every column of c, one slice per
// landing column in LandingColumns order, and returns it. This is the one
// place that maps the buffers to the column order; the values borrow c's
// memory (see arena) until reset.
func (c *columns) slices(dst []any, lo, hi int) []any {
	return append(dst,
		c.dead[lo:hi], c.eventID[lo:hi], c.observedAt[lo:hi], c.observedAtMS[lo:hi], c.ingestedAt[lo:hi],
		c.topic[lo:hi], c.partition[lo:hi], c.offset[lo:hi],
		c.sourceKind[lo:hi], c.sourceID[lo:hi], c.agent[lo:hi], c.endpoint[lo:hi], c.caller[lo:hi], c.method[lo:hi], c.attempt[lo:hi],
		c.httpRequestID[lo:hi], c.jsonrpcID[lo:hi], c.messageID[lo:hi], c.taskID[lo:hi], c.idemHash[lo:hi],
		c.protocol[lo:hi], c.binding[lo:hi], c.envelope[lo:hi], c.httpStatus[lo:hi], c.grpcStatus[lo:hi], c.jsonrpcCode[lo:hi],
		c.code[lo:hi], c.reason[lo:hi], c.domain[lo:hi], c.kind[lo:hi], c.typed[lo:hi],
		c.retryable[lo:hi], c.retryableSource[lo:hi], c.retryAfterMS[lo:hi], c.retryAfterSource[lo:hi],
		c.limit[lo:hi], c.scope[lo:hi], c.errorID[lo:hi], c.requestID[lo:hi], c.message[lo:hi],
		c.violationFields[lo:hi], c.violationDescs[lo:hi], c.finding[lo:hi],
		c.dlReason[lo:hi], c.dlError[lo:hi], c.raw[lo:hi], c.sourceVersion[lo:hi],
		c.traceID[lo:hi], c.spanID[lo:hi], c.origin[lo:hi], c.inferred[lo:hi], c.kafkaIndex[lo:hi],
	)
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

// keepOnly removes the rows whose keep[i] is false, preserving order.
func (c *columns) keepOnly(keep []bool) {
	j := 0
	for i := 0; i < c.n; i++ {
		if !keep[i] {
			continue
		}
		if i != j {
			c.dead[j] = c.dead[i]
			c.eventID[j] = c.eventID[i]
			c.observedAt[j] = c.observedAt[i]
			c.observedAtMS[j] = c.observedAtMS[i]
			c.ingestedAt[j] = c.ingestedAt[i]
			c.topic[j] = c.topic[i]
			c.partition[j] = c.partition[i]
			c.offset[j] = c.offset[i]
			c.sourceKind[j], c.sourceID[j], c.agent[j], c.endpoint[j] = c.sourceKind[i], c.sourceID[i], c.agent[i], c.endpoint[i]
			c.caller[j], c.method[j] = c.caller[i], c.method[i]
			c.attempt[j] = c.attempt[i]
			c.httpRequestID[j], c.jsonrpcID[j], c.messageID[j], c.taskID[j] = c.httpRequestID[i], c.jsonrpcID[i], c.messageID[i], c.taskID[i]
			c.idemHash[j] = c.idemHash[i]
			c.protocol[j], c.binding[j], c.envelope[j] = c.protocol[i], c.binding[i], c.envelope[i]
			c.httpStatus[j] = c.httpStatus[i]
			c.grpcStatus[j] = c.grpcStatus[i]
			c.jsonrpcCode[j] = c.jsonrpcCode[i]
			c.code[j], c.reason[j], c.domain[j], c.kind[j] = c.code[i], c.reason[i], c.domain[i], c.kind[i]
			c.typed[j] = c.typed[i]
			c.retryable[j] = c.retryable[i]
			c.retryableSource[j] = c.retryableSource[i]
			c.retryAfterMS[j] = c.retryAfterMS[i]
			c.retryAfterSource[j], c.limit[j], c.scope[j] = c.retryAfterSource[i], c.limit[i], c.scope[i]
			c.errorID[j], c.requestID[j], c.message[j] = c.errorID[i], c.requestID[i], c.message[i]
			c.violationFields[j], c.violationDescs[j], c.finding[j] = c.violationFields[i], c.violationDescs[i], c.finding[i]
			c.dlReason[j], c.dlError[j], c.raw[j] = c.dlReason[i], c.dlError[i], c.raw[i]
			c.traceID[j], c.spanID[j], c.origin[j] = c.traceID[i], c.spanID[i], c.origin[i]
			c.inferred[j], c.kafkaIndex[j] = c.inferred[i], c.kafkaIndex[i]
			c.sourceVersion[j] = c.sourceVersion[i]
			c.eventHash[j] = c.eventHash[i]
		}
		j++
	}
	c.n = j
	c.dead = c.dead[:j]
	c.eventID = c.eventID[:j]
	c.observedAt = c.observedAt[:j]
	c.observedAtMS = c.observedAtMS[:j]
	c.ingestedAt = c.ingestedAt[:j]
	c.topic = c.topic[:j]
	c.partition = c.partition[:j]
	c.offset = c.offset[:j]
	c.sourceKind, c.sourceID, c.agent, c.endpoint = c.sourceKind[:j], c.sourceID[:j], c.agent[:j], c.endpoint[:j]
	c.caller, c.method = c.caller[:j], c.method[:j]
	c.attempt = c.attempt[:j]
	c.httpRequestID, c.jsonrpcID, c.messageID, c.taskID = c.httpRequestID[:j], c.jsonrpcID[:j], c.messageID[:j], c.taskID[:j]
	c.idemHash = c.idemHash[:j]
	c.protocol, c.binding, c.envelope = c.protocol[:j], c.binding[:j], c.envelope[:j]
	c.httpStatus = c.httpStatus[:j]
	c.grpcStatus = c.grpcStatus[:j]
	c.jsonrpcCode = c.jsonrpcCode[:j]
	c.code, c.reason, c.domain, c.kind = c.code[:j], c.reason[:j], c.domain[:j], c.kind[:j]
	c.typed = c.typed[:j]
	c.retryable = c.retryable[:j]
	c.retryableSource = c.retryableSource[:j]
	c.retryAfterMS = c.retryAfterMS[:j]
	c.retryAfterSource, c.limit, c.scope = c.retryAfterSource[:j], c.limit[:j], c.scope[:j]
	c.errorID, c.requestID, c.message = c.errorID[:j], c.requestID[:j], c.message[:j]
	c.violationFields, c.violationDescs, c.finding = c.violationFields[:j], c.violationDescs[:j], c.finding[:j]
	c.dlReason, c.dlError, c.raw = c.dlReason[:j], c.dlError[:j], c.raw[:j]
	c.traceID, c.spanID, c.origin = c.traceID[:j], c.spanID[:j], c.origin[:j]
	c.inferred, c.kafkaIndex = c.inferred[:j], c.kafkaIndex[:j]
	c.sourceVersion = c.sourceVersion[:j]
	c.eventHash = c.eventHash[:j]
}

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
