package otlpin

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/errtrail/errtrail/parse"
)

// Signal is what an OTLP topic carries.
type Signal string

const (
	Traces Signal = "traces" // ExportTraceServiceRequest
	Logs   Signal = "logs"   // ExportLogsServiceRequest
)

// Encoding is the Kafka exporter's encoding of a topic.
type Encoding string

const (
	Proto Encoding = "otlp_proto" // the exporter's default
	JSON  Encoding = "otlp_json"
)

// Format is how one topic's messages are read.
type Format struct {
	Signal   Signal
	Encoding Encoding
}

// ParseFormat reads "otlp_proto" or "otlp_json", optionally followed by
// "/traces" or "/logs"; without a signal the topic name decides (a name
// holding "log" is logs, one holding "span" or "trace" is traces).
func ParseFormat(topic, s string) (Format, error) {
	enc, sig, _ := strings.Cut(s, "/")
	f := Format{Encoding: Encoding(enc), Signal: Signal(sig)}
	if f.Encoding != Proto && f.Encoding != JSON {
		return Format{}, fmt.Errorf("topic %s: encoding %q: want otlp_proto or otlp_json", topic, enc)
	}
	if f.Signal == "" {
		low := strings.ToLower(topic)
		switch {
		case strings.Contains(low, "log"):
			f.Signal = Logs
		case strings.Contains(low, "span"), strings.Contains(low, "trace"):
			f.Signal = Traces
		default:
			return Format{}, fmt.Errorf("topic %s: cannot tell traces from logs by its name: give %s/traces or %s/logs", topic, enc, enc)
		}
	}
	if f.Signal != Traces && f.Signal != Logs {
		return Format{}, fmt.Errorf("topic %s: signal %q: want traces or logs", topic, sig)
	}
	return f, nil
}

// Config configures a Decoder.
type Config struct {
	// Parse are the options of the reply decoder (limits, hash key).
	Parse parse.Options
	// CallerAttribute names the attribute that holds the caller (default
	// enduser.id; client.address is the other usual choice).
	CallerAttribute string
}

// Counts says what one message held.
type Counts struct {
	Errors int // spans or log records that became records (dead-letter ones included)
	OK     int // protocol replies that succeeded: counted, never stored
	Other  int // spans or log records that describe no protocol reply
}

// Emit receives one record of a message: index is its place among the
// message's spans (or log records), derr is non-nil for a span whose
// attached reply could not be decoded (rec then holds its context). rec is
// borrowed for the call.
type Emit func(index uint32, rec *parse.Record, derr *parse.DecodeError)

// Decoder decodes OTLP messages. Not safe for concurrent use.
type Decoder struct {
	cfg Config
	pd  *parse.Decoder
	rec parse.Record
	// TracesData and LogsData have the wire form (and the JSON form) of
	// ExportTraceServiceRequest and ExportLogsServiceRequest (one field,
	// resource_spans or resource_logs, number 1), without the gRPC
	// service packages.
	traces tracepb.TracesData
	logs   logspb.LogsData
	b      builder
}

// NewDecoder returns a Decoder.
func NewDecoder(cfg Config) *Decoder {
	if cfg.CallerAttribute == "" {
		cfg.CallerAttribute = attrs(fCaller)[0]
	}
	return &Decoder{cfg: cfg, pd: parse.NewDecoder(cfg.Parse)}
}

func badOTLP(path, detail string) *parse.DecodeError {
	return &parse.DecodeError{Reason: parse.ErrBadOTLP, Path: path, Offset: -1, Detail: detail}
}

// Kafka headers a Collector's Kafka exporter adds from the request's
// metadata (its include_metadata_keys): they give the context of every
// item of the message that its attributes leave empty.
const (
	HeaderAgent      = "errtrail-agent"
	HeaderCaller     = "errtrail-caller"
	HeaderSourceKind = "errtrail-source-kind"
	HeaderSourceID   = "errtrail-source-id"
)

// Decode reads one Kafka message of a topic of format f and calls emit for
// each failed protocol reply in it, in the message's order. headers are the
// message's Kafka headers (HeaderAgent …). kafkaTimeMS is
// the Kafka timestamp, for items without a time. A message that does not
// parse returns a *parse.DecodeError (reason bad_otlp) and emits nothing.
func (d *Decoder) Decode(value []byte, headers []parse.MsgHeader, f Format, kafkaTimeMS int64, emit Emit) (Counts, error) {
	var c Counts
	d.b.hdrAgent, d.b.hdrCaller, d.b.hdrSourceKind, d.b.hdrSourceID = "", "", "", ""
	for _, h := range headers {
		switch strings.ToLower(h.Key) {
		case HeaderAgent:
			d.b.hdrAgent = string(h.Value)
		case HeaderCaller:
			d.b.hdrCaller = string(h.Value)
		case HeaderSourceKind:
			d.b.hdrSourceKind = string(h.Value)
		case HeaderSourceID:
			d.b.hdrSourceID = string(h.Value)
		}
	}
	if len(value) == 0 {
		return c, &parse.DecodeError{Reason: parse.ErrEmpty, Path: "otlp", Offset: -1, Detail: "empty message value"}
	}
	max := d.cfg.Parse.MaxBytes
	if max <= 0 {
		max = 1 << 20
	}
	if len(value) > 16*max {
		return c, &parse.DecodeError{Reason: parse.ErrTooLarge, Path: "otlp", Offset: -1, Detail: "OTLP message larger than 16 times the reply limit"}
	}
	var msg proto.Message
	switch f.Signal {
	case Traces:
		d.traces.Reset()
		msg = &d.traces
	case Logs:
		d.logs.Reset()
		msg = &d.logs
	default:
		return c, badOTLP("otlp", "unknown signal")
	}
	switch f.Encoding {
	case Proto:
		if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(value, msg); err != nil {
			return c, badOTLP("otlp_proto", "not a protobuf "+string(msg.ProtoReflect().Descriptor().Name()))
		}
	case JSON:
		if err := unmarshalJSON(value, msg); err != nil {
			return c, badOTLP("otlp_json", err.Error())
		}
	default:
		return c, badOTLP("otlp", "unknown encoding")
	}
	var idx uint32
	if f.Signal == Traces {
		for _, rs := range d.traces.GetResourceSpans() {
			res := rs.GetResource().GetAttributes()
			for _, ss := range rs.GetScopeSpans() {
				for _, sp := range ss.GetSpans() {
					d.item(fromSpan(sp, res), idx, kafkaTimeMS, &c, emit)
					idx++
				}
			}
		}
		return c, nil
	}
	for _, rl := range d.logs.GetResourceLogs() {
		res := rl.GetResource().GetAttributes()
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				it := item{a: attrSet{own: lr.GetAttributes(), res: res}, traceID: lr.GetTraceId(), spanID: lr.GetSpanId(),
					isLog: true, severity: int32(lr.GetSeverityNumber()), timeNS: lr.GetTimeUnixNano()}
				if it.timeNS == 0 {
					it.timeNS = lr.GetObservedTimeUnixNano()
				}
				it.message = text(lr.GetBody())
				d.item(it, idx, kafkaTimeMS, &c, emit)
				idx++
			}
		}
	}
	return c, nil
}

// item is a span or log record, reduced to what the decoder reads.
type item struct {
	a         attrSet
	traceID   []byte
	spanID    []byte
	kind      tracepb.Span_SpanKind
	statusErr bool
	statusMsg string
	message   string // exception.message, or a log record's body
	timeNS    uint64
	isLog     bool
	severity  int32
}

func fromSpan(sp *tracepb.Span, res []*commonpb.KeyValue) item {
	it := item{a: attrSet{own: sp.GetAttributes(), res: res}, traceID: sp.GetTraceId(), spanID: sp.GetSpanId(),
		kind: sp.GetKind(), timeNS: sp.GetEndTimeUnixNano()}
	if it.timeNS == 0 {
		it.timeNS = sp.GetStartTimeUnixNano()
	}
	if st := sp.GetStatus(); st.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		it.statusErr, it.statusMsg = true, st.GetMessage()
	}
	for _, ev := range sp.GetEvents() {
		if ev.GetName() != "exception" {
			continue
		}
		for _, kv := range ev.GetAttributes() {
			if kv.GetKey() == attrs(fMessage)[0] && it.message == "" {
				it.message = text(kv.GetValue())
			}
		}
	}
	if it.message == "" {
		it.message = it.statusMsg
	}
	return it
}

// item decodes one span or log record and counts it.
func (d *Decoder) item(it item, idx uint32, kafkaTimeMS int64, c *Counts, emit Emit) {
	switch d.b.build(d, &it, kafkaTimeMS, &d.rec) {
	case outOther:
		c.Other++
	case outOK:
		c.OK++
	case outError:
		c.Errors++
		emit(idx, &d.rec, nil)
	case outDead:
		c.Errors++
		emit(idx, &d.rec, d.b.derr)
	}
}
