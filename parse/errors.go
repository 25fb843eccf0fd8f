package parse

import "fmt"

// ErrReason is the stable code of a decode failure. It becomes the reason of
// a dead-letter row and the value of the `reason` label of
// errtrail_ingest_dead_letter_total, so the set is closed and small.
type ErrReason string

const (
	ErrEmpty       ErrReason = "empty"        // the message has no bytes
	ErrTooLarge    ErrReason = "too_large"    // over Options.MaxBytes
	ErrTooDeep     ErrReason = "too_deep"     // JSON nesting over Options.MaxDepth
	ErrInvalidJSON ErrReason = "invalid_json" // malformed or truncated JSON
	ErrInvalidUTF8 ErrReason = "invalid_utf8" // a JSON string that is not UTF-8
	ErrWrongType   ErrReason = "wrong_type"   // a known member with the wrong JSON type
	ErrBadHTTP     ErrReason = "bad_http"     // a raw HTTP/1.1 response that cannot be framed
	ErrBadGRPC     ErrReason = "bad_grpc"     // gRPC status or grpc-status-details-bin unusable
	ErrBadEvent    ErrReason = "bad_event"    // event JSON without the members the contract requires
	ErrBadVersion  ErrReason = "bad_version"  // event contract version this build does not know
	ErrNotAnError  ErrReason = "not_an_error" // the reply is a success (e.g. 2xx with a result)
	ErrBadOTLP     ErrReason = "bad_otlp"     // an OTLP message (package otlpin) that does not parse as its topic's encoding
)

// Reasons lists every ErrReason, for metrics initialisation and docs.
var Reasons = []ErrReason{ErrEmpty, ErrTooLarge, ErrTooDeep, ErrInvalidJSON, ErrInvalidUTF8,
	ErrWrongType, ErrBadHTTP, ErrBadGRPC, ErrBadEvent, ErrBadVersion, ErrNotAnError, ErrBadOTLP}

// DecodeError says why and where a message could not be decoded.
type DecodeError struct {
	Reason ErrReason
	Path   string // JSON path or section ("event.reply.body", "http.headers") where it failed
	Offset int    // byte offset into the section named by Path; -1 when not applicable
	Detail string // short, fixed text; never contains input bytes
}

func (e *DecodeError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("%s at %s (byte %d): %s", e.Reason, e.Path, e.Offset, e.Detail)
	}
	return fmt.Sprintf("%s at %s: %s", e.Reason, e.Path, e.Detail)
}

func errAt(reason ErrReason, path string, off int, detail string) *DecodeError {
	return &DecodeError{Reason: reason, Path: path, Offset: off, Detail: detail}
}
