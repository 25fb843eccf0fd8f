package emit

import (
	"net/http"
	"strings"
	"sync"

	"github.com/errtrail/errtrail/parse"
	"github.com/errtrail/errtrail/redact"
)

// This file keeps credentials in the process, with the decoder's own rules
// (package redact), so an event carries nothing the decoder would drop.

// DropHeader reports whether a header must not leave the process: every
// header the decoder drops (redact.SensitiveHeader: Authorization, Cookie,
// Set-Cookie, Proxy-Authorization, DPoP, *-Api-Key, X-Api-Key, *-Token, …),
// and the idempotency key header, which may travel only as
// request.idempotency_key (ingest stores it only as a hash).
func DropHeader(name, idempotencyHeader string) bool {
	return redact.SensitiveHeader(name) || strings.EqualFold(name, "Idempotency-Key") ||
		(idempotencyHeader != "" && strings.EqualFold(name, idempotencyHeader))
}

// AppendHeaders appends the fields of h that may leave the process to dst,
// in a stable order (sorted by name, values in order). idempotencyHeader is
// the configured idempotency key header ("" for the default only).
func AppendHeaders(dst []Header, h http.Header, idempotencyHeader string) []Header {
	start := len(dst)
	for name, vs := range h {
		if DropHeader(name, idempotencyHeader) {
			if len(vs) > 0 && parse.TransportHeader(name) {
				dst = append(dst, Header{name, ""}) // its presence says the protocol; never its value
			}
			continue
		}
		for _, v := range vs {
			dst = append(dst, Header{name, v})
		}
	}
	sortHeaders(dst[start:])
	return dst
}

// snapHeaders copies every field of h to dst as it is, unsorted and
// unfiltered: the cheap part, for the moment a reply's status is written
// (the handler may change its header map afterwards without effect). An
// error reply's copy is sorted when it is published, and the observer
// drops what must not leave the process.
func snapHeaders(dst []Header, h http.Header) []Header {
	for name, vs := range h {
		for _, v := range vs {
			dst = append(dst, Header{name, v})
		}
	}
	return dst
}

// sortHeaders is an insertion sort by name (stable: repeated values keep
// their order); header lists are short.
func sortHeaders(hs []Header) {
	for i := 1; i < len(hs); i++ {
		for j := i; j > 0 && hs[j].Name < hs[j-1].Name; j-- {
			hs[j], hs[j-1] = hs[j-1], hs[j]
		}
	}
}

// CleanHeaders filters a list of fields (gRPC metadata, trailers) with
// DropHeader, in place.
func CleanHeaders(hs []Header, idempotencyHeader string) []Header {
	out := hs[:0]
	for _, h := range hs {
		switch {
		case !DropHeader(h.Name, idempotencyHeader):
			out = append(out, h)
		case parse.TransportHeader(h.Name):
			out = append(out, Header{h.Name, ""}) // its presence says the protocol; never its value
		}
	}
	return out
}

var redactors = sync.Pool{New: func() any { return redact.New(nil) }}

// CleanEndpoint applies the decoder's endpoint rule (redact.Redactor.Endpoint):
// userinfo in every form, query and fragment dropped, value-like path
// segments as {id}. The rule is idempotent, so the decoder stores the same
// endpoint from the cleaned value as from the original. Endpoints carry no
// hashes, so no deployment key is needed here.
func CleanEndpoint(s string) string {
	if s == "" {
		return ""
	}
	r := redactors.Get().(*redact.Redactor)
	out := r.Endpoint(s)
	redactors.Put(r)
	return out
}
