package emit

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Sink receives error-reply events. Publish must not block and must not
// keep ev, or anything it points to, after it returns (the builders reuse
// their buffers): copy or marshal what you keep. It reports whether the
// event was accepted. *Publisher is the Kafka sink.
type Sink interface {
	Publish(ev *Event) bool
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ev *Event) bool

// Publish calls f.
func (f SinkFunc) Publish(ev *Event) bool { return f(ev) }

// Observer turns observed replies into events for a sink: it stamps the
// source, an event id and the time, and removes what must not leave the
// process. The HTTP middleware and transport use one; so can a gRPC
// interceptor or a tap. It is safe for concurrent use.
type Observer struct {
	Sink   Sink
	Source Source
	// IdempotencyHeader names a non-default idempotency key header, dropped
	// from published headers like Idempotency-Key.
	IdempotencyHeader string

	prefix string // source id + this process's random prefix
	seq    atomic.Uint64
	// endpoint remembers the last endpoint cleaned: an agent answers on a
	// few paths, and cleaning one costs more than the rest of an event.
	endpoint atomic.Pointer[cleanedEndpoint]
}

type cleanedEndpoint struct{ raw, clean string }

// cleanEndpoint is CleanEndpoint with a one-entry cache. raw may be a view
// of a buffer its caller reuses: what is cached is a copy.
func (o *Observer) cleanEndpoint(raw string) string {
	if c := o.endpoint.Load(); c != nil && c.raw == raw {
		return c.clean
	}
	c := &cleanedEndpoint{raw: strings.Clone(raw)}
	c.clean = strings.Clone(CleanEndpoint(c.raw))
	o.endpoint.Store(c)
	return c.clean
}

// NewObserver returns an observer publishing to sink as src. An empty
// src.ID takes the host name.
func NewObserver(sink Sink, src Source) *Observer {
	if src.ID == "" {
		src.ID, _ = os.Hostname()
	}
	var r [8]byte
	_, _ = rand.Read(r[:])
	p := hex.EncodeToString(r[:])
	if src.ID != "" {
		id := src.ID
		if len(id) > 80 {
			id = id[:80]
		}
		p = id + ":" + p
	}
	return &Observer{Sink: sink, Source: src, prefix: p}
}

// NewEventID returns an id unique to this reply: the source id, a random
// prefix chosen when the observer was made and a counter (lower-case hex,
// so the decoder keeps it as it is). A Kafka retry of the same message
// carries the same id, so ingest stores it once.
func (o *Observer) NewEventID() string {
	n := o.seq.Add(1)
	b := make([]byte, 0, len(o.prefix)+17)
	b = append(b, o.prefix...)
	b = append(b, '-')
	b = strconv.AppendUint(b, n, 16)
	return bstr(b)
}

// Publish completes ev and hands it to the sink: an event id, the source
// and the observation time when missing; credential and idempotency-key
// headers and trailers removed (in place); the endpoint cleaned. The caller
// keeps ownership of ev once Publish returns.
func (o *Observer) Publish(ev *Event) bool {
	if ev.EventID == "" {
		ev.EventID = o.NewEventID()
	}
	if ev.Source.Kind == "" && ev.Source.ID == "" && ev.Source.Version == "" {
		ev.Source = o.Source
	}
	if ev.ObservedAt.IsZero() {
		ev.ObservedAt = time.Now()
	}
	ev.Reply.Headers = CleanHeaders(ev.Reply.Headers, o.IdempotencyHeader)
	if ev.Reply.GRPC != nil {
		ev.Reply.GRPC.Trailers = CleanHeaders(ev.Reply.GRPC.Trailers, o.IdempotencyHeader)
	}
	ev.Endpoint = o.cleanEndpoint(ev.Endpoint)
	return o.Sink.Publish(ev)
}
