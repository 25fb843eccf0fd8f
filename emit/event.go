package emit

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"
)

// Source kinds of the contract (docs/event-contract.md, source.kind).
const (
	KindAgent   = "agent"
	KindGateway = "gateway"
	KindClient  = "client"
)

// Bindings of the contract (reply.binding); a hint, the decoder decides.
const (
	BindingJSONRPC = "jsonrpc"
	BindingHTTP    = "http"
	BindingGRPC    = "grpc"
)

// Source says who observed a reply.
type Source struct {
	Kind string // KindAgent, KindGateway or KindClient
	ID   string // the instance, e.g. a host name
	// Version is the version of the agent (or gateway) that answered,
	// e.g. "1.4.2" (source.version): errtrail's error groups record the
	// versions they were seen with and tell a group new in a release from
	// one an old release still raises. Optional.
	Version string
}

// Header is one HTTP header field, gRPC metadata entry or trailer.
type Header struct {
	Name  string
	Value string
}

// Request holds the ids the caller sent with the request.
type Request struct {
	HTTPRequestID string
	// JSONRPCID is the JSON-RPC id as its JSON token: a quoted string
	// (`"req-41"`) or a number (`7`); nil or `null` leaves it out. IDString
	// and IDNumber build one.
	JSONRPCID      json.RawMessage
	MessageID      string
	TaskID         string
	IdempotencyKey string // only ever written to request.idempotency_key
	// TraceID and SpanID are the request's W3C trace context (32 and 16
	// lowercase hex digits), written as the event's trace_id and span_id.
	// FromHeaders takes them from the traceparent header; a value of any
	// other form is not published.
	TraceID string
	SpanID  string
}

// GRPC is the status of a gRPC reply.
type GRPC struct {
	Status   int // 0–16
	Message  string
	Trailers []Header // grpc-status-details-bin as sent (base64)
}

// Reasons an error reply's body is not in its event (reply.body_incomplete
// of the contract): the event then carries the status and headers and no
// body, since a cut body would not decode (a JSON error cut in two is no
// JSON).
const (
	BodyTooLarge = "too_large" // the body passed Config.MaxBodyBytes (published as it passes the bound)
	BodyCut      = "cut"       // the body ended early: the connection closed mid-body
)

// Reply is the reply as observed.
type Reply struct {
	Binding    string // optional hint: BindingJSONRPC, BindingHTTP, BindingGRPC
	HTTPStatus int    // 0 for a reply that did not travel over HTTP/1.1 or HTTP+JSON
	Headers    []Header
	Body       []byte
	// BodyIncomplete says why the body is left out (BodyTooLarge, BodyCut),
	// "" when Body is the whole body.
	BodyIncomplete string
	GRPC           *GRPC
}

// Event is one error reply in the form of the event contract v1. Its JSON
// (AppendJSON, MarshalJSON) is valid under docs/event.schema.json. The
// builders of this package (Observer, Handler, Transport) fill it with
// credentials already removed; an Event built by hand should go through
// Observer.Publish for the same.
type Event struct {
	EventID    string
	ObservedAt time.Time
	Source     Source
	Agent      string
	Endpoint   string
	Caller     string
	Method     string
	Attempt    int // 0: not known
	Request    Request
	Reply      Reply
}

// IDString returns the JSON token of a string JSON-RPC id.
func IDString(s string) json.RawMessage { return appendString(nil, s) }

// IDNumber returns the JSON token of a numeric JSON-RPC id.
func IDNumber(n int64) json.RawMessage { return strconv.AppendInt(nil, n, 10) }

// ErrInvalidEvent is returned by AppendJSON for an event the contract
// cannot carry (an out-of-range status or attempt, an id that is not a
// JSON string or number).
var ErrInvalidEvent = errors.New("emit: event outside the contract")

// maxBodyJSONDepth is the deepest body embedded as body_json: the event adds
// two levels to the decoder's limit of 64, so deeper bodies travel as text.
const maxBodyJSONDepth = 60

// MarshalJSON implements json.Marshaler.
func (e *Event) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil) }

// AppendJSON appends the event JSON to dst. Empty members are left out. The
// body goes as body_json when it is a JSON object or array (cheapest to
// decode, and readable on the topic), as body when it is other UTF-8 text,
// and as body_base64 otherwise.
func (e *Event) AppendJSON(dst []byte) ([]byte, error) {
	if e.Attempt < 0 || e.Attempt > 65535 || e.Reply.HTTPStatus < 0 || e.Reply.HTTPStatus > 999 ||
		len(e.EventID) > 128 || (e.Reply.GRPC != nil && (e.Reply.GRPC.Status < 0 || e.Reply.GRPC.Status > 16)) {
		return dst, ErrInvalidEvent
	}
	idNum, idStr, idIsString, err := rpcID(e.Request.JSONRPCID)
	if err != nil {
		return dst, err
	}
	hasID := idNum != nil || idIsString
	b := append(dst, `{"v":1`...)
	b = member(b, "event_id", e.EventID)
	b = append(b, `,"observed_at":`...)
	ms := e.ObservedAt.UnixMilli()
	if e.ObservedAt.IsZero() || ms < 0 {
		ms = 0
	}
	b = strconv.AppendInt(b, ms, 10)
	if e.Source.Kind != "" || e.Source.ID != "" || e.Source.Version != "" {
		b = append(b, `,"source":{`...)
		n := len(b)
		b = member(b, "kind", e.Source.Kind)
		b = member(b, "id", e.Source.ID)
		b = member(b, "version", e.Source.Version)
		if len(b) > n && b[n] == ',' {
			b = append(b[:n], b[n+1:]...)
		}
		b = append(b, '}')
	}
	b = member(b, "agent", e.Agent)
	b = member(b, "endpoint", e.Endpoint)
	b = member(b, "caller", e.Caller)
	b = member(b, "method", e.Method)
	if e.Attempt > 0 {
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(e.Attempt), 10)
	}
	r := &e.Request
	if validHexID(r.TraceID, 32) && validHexID(r.SpanID, 16) {
		b = member(b, "trace_id", r.TraceID)
		b = member(b, "span_id", r.SpanID)
	}
	if r.HTTPRequestID != "" || hasID || r.MessageID != "" || r.TaskID != "" || r.IdempotencyKey != "" {
		b = append(b, `,"request":{`...)
		n := len(b)
		b = member(b, "http_request_id", r.HTTPRequestID)
		if hasID {
			b = append(b, `,"jsonrpc_id":`...)
			if idIsString {
				b = appendString(b, idStr) // re-escaped as the contract writes strings
			} else {
				b = append(b, idNum...)
			}
		}
		b = member(b, "message_id", r.MessageID)
		b = member(b, "task_id", r.TaskID)
		b = member(b, "idempotency_key", r.IdempotencyKey)
		b = append(b[:n], b[n+1:]...) // the first member's comma
		b = append(b, '}')
	}
	p := &e.Reply
	b = append(b, `,"reply":{`...)
	n := len(b)
	b = member(b, "binding", p.Binding)
	if p.HTTPStatus > 0 {
		b = append(b, `,"http_status":`...)
		b = strconv.AppendInt(b, int64(p.HTTPStatus), 10)
	}
	if len(p.Headers) > 0 {
		b = append(b, `,"headers":`...)
		b = appendFields(b, p.Headers)
	}
	if len(p.Body) > 0 {
		b = appendBody(b, p.Body)
	}
	b = member(b, "body_incomplete", p.BodyIncomplete)
	if g := p.GRPC; g != nil {
		b = append(b, `,"grpc":{"status":`...)
		b = strconv.AppendInt(b, int64(g.Status), 10)
		b = member(b, "message", g.Message)
		if len(g.Trailers) > 0 {
			b = append(b, `,"trailers":`...)
			b = appendFields(b, g.Trailers)
		}
		b = append(b, '}')
	}
	if len(b) > n && b[n] == ',' {
		b = append(b[:n], b[n+1:]...)
	}
	b = append(b, "}}"...)
	return b, nil
}

// rpcID checks a JSON-RPC id token and returns what the event carries: the
// string it holds (isString), or the number token as it is; none (nil, "")
// for an empty or null id.
func rpcID(id json.RawMessage) (num json.RawMessage, str string, isString bool, err error) {
	if len(id) == 0 || string(id) == "null" {
		return nil, "", false, nil
	}
	switch c := id[0]; {
	case c == '"':
		if s, ok := jsonString(id); ok {
			return nil, s, true, nil
		}
	case c == '-' || c >= '0' && c <= '9':
		if json.Valid(id) {
			return id, "", false, nil
		}
	}
	return nil, "", false, ErrInvalidEvent
}

// member appends ,"name":"value" when value is not empty.
func member(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// appendFields writes headers as [name, value] pairs, which keep order and
// repeated fields.
func appendFields(b []byte, hs []Header) []byte {
	b = append(b, '[')
	for i, h := range hs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendString(b, h.Name)
		b = append(b, ',')
		b = appendString(b, h.Value)
		b = append(b, ']')
	}
	return append(b, ']')
}

func appendBody(b, body []byte) []byte {
	if c := firstNonSpace(body); (c == '{' || c == '[') && validJSON(body, maxBodyJSONDepth) {
		b = append(b, `,"body_json":`...)
		return append(b, trimSpace(body)...)
	}
	if utf8.Valid(body) {
		b = append(b, `,"body":`...)
		return appendStringBytes(b, body)
	}
	b = append(b, `,"body_base64":"`...)
	b = base64.StdEncoding.AppendEncode(b, body)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				i += size
				start = i
				continue
			}
			if r == '\u2028' || r == '\u2029' {
				b = append(b, s[start:i]...)
				b = append(b, `\u202`...)
				b = append(b, hexDigits[r&0xf])
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendStringBytes(b, s []byte) []byte { return appendString(b, bstr(s)) }
