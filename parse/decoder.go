package parse

import "github.com/errtrail/errtrail/redact"

// Header is one HTTP header field or gRPC metadata entry, as received.
type Header struct {
	Name  string
	Value string
}

// MsgHeader is one Kafka record header. Its layout matches kafka-go's
// kafka.Header so that a slice of one converts to the other without copying.
type MsgHeader struct {
	Key   string
	Value []byte
}

// Reply is one error reply, already split from its carrier.
type Reply struct {
	Binding    Binding // a hint from the producer; may be empty
	HTTPStatus int     // 0 when the reply did not travel as HTTP/1.1 or HTTP+JSON
	Headers    []Header
	Body       []byte

	GRPCStatus   int // -1 when there is no grpc-status
	GRPCMessage  string
	GRPCTrailers []Header // includes grpc-status-details-bin when present

	ObservedAtMS int64 // the observation time, used to resolve HTTP-date Retry-After
}

// Options bound the work a Decoder does for one message.
type Options struct {
	MaxBytes int // largest message accepted; default 1 MiB
	MaxDepth int // deepest JSON nesting accepted; default 64
	KeepRaw  int // bytes of the redacted body kept by RawBody; default 4 KiB, <0 keeps none
	// HashKey keys the hashes that replace identifier values that may not be
	// stored as they are (redact.New). Every decoder of one deployment, and
	// its support lookups, must use the same key, and the key must never be
	// stored with the rows. Empty means an unkeyed hash: tests and local
	// decoding only.
	HashKey []byte
}

func (o *Options) defaults() {
	if o.MaxBytes <= 0 {
		o.MaxBytes = 1 << 20
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 64
	}
	if o.KeepRaw == 0 {
		o.KeepRaw = 4 << 10
	}
}

// Decoder decodes error replies into Records. It keeps scratch space between
// calls, so it is not safe for concurrent use: give each goroutine its own.
type Decoder struct {
	opt  Options
	sc   scratch
	rd   *redact.Redactor
	last [nLastFields]lastValue // sanitize.go
}

// NewDecoder returns a Decoder with the given limits (zero values take defaults).
func NewDecoder(opt Options) *Decoder {
	opt.defaults()
	return &Decoder{opt: opt, rd: redact.New(opt.HashKey)}
}

// DecodeMessage decodes one Kafka message value: event JSON, a raw HTTP/1.1
// response or a gRPC reply text form (docs/event-contract.md). headers are
// the Kafka record headers; kafkaTimeMS is the record timestamp, used when
// the message names no observation time. On failure it returns a
// *DecodeError and out holds whatever context could be read.
func (d *Decoder) DecodeMessage(value []byte, headers []MsgHeader, kafkaTimeMS int64, out *Record) error {
	err := d.decodeMessage(value, headers, kafkaTimeMS, out)
	d.sanitize(out)
	return err
}

// DecodeReply decodes a reply that is already split from its carrier. The
// context fields of out (caller, method, ...) are left as the caller set them.
func (d *Decoder) DecodeReply(rep *Reply, out *Record) error {
	err := d.decodeReply(rep, out)
	d.sanitize(out)
	return err
}

// RawBody returns the body of the last decoded reply after redaction, capped
// at Options.KeepRaw bytes. The bytes are borrowed until the next call.
func (d *Decoder) RawBody() []byte { return d.sc.raw }
