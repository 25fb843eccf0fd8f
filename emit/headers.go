package emit

import (
	"net/http"
	"strings"
	"sync"

	"github.com/errtrail/errtrail/redact"
)

// This file keeps credentials and customer values in the process: an
// event carries only the reply headers on errtrail's allow-list
// (redact.KeptHeader, the headers the decoder reads), the same list the
// decoder keeps on ingest. Every other header is dropped, whatever its name.

// DropHeader reports whether a header's value must not leave the process:
// every header off the allow-list (redact.KeptHeader) — Authorization,
// Set-Cookie, Location, WWW-Authenticate, vendor headers, X-Key, … — and the
// protocols' transport headers, whose presence alone travels
// (Mcp-Session-Id is a session credential). The idempotency key header
// never leaves either: the key travels only as request.idempotency_key,
// which ingest stores as a hash.
func DropHeader(name, idempotencyHeader string) bool {
	return keep(name, idempotencyHeader) != redact.HeaderValue
}

// keep is what of header name may leave the process.
func keep(name, idempotencyHeader string) redact.HeaderUse {
	if strings.EqualFold(name, "Idempotency-Key") || (idempotencyHeader != "" && strings.EqualFold(name, idempotencyHeader)) {
		return redact.HeaderDrop
	}
	return redact.KeptHeader(name)
}

// AppendHeaders appends the fields of h that may leave the process to dst,
// in a stable order (sorted by name, values in order). idempotencyHeader is
// the configured idempotency key header ("" for the default only).
func AppendHeaders(dst []Header, h http.Header, idempotencyHeader string) []Header {
	start := len(dst)
	for name, vs := range h {
		switch keep(name, idempotencyHeader) {
		case redact.HeaderValue:
			for _, v := range vs {
				dst = append(dst, Header{name, v})
			}
		case redact.HeaderName:
			if len(vs) > 0 {
				dst = append(dst, Header{name, ""}) // its presence is what the decoder reads; never its value
			}
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

// CleanHeaders filters a list of fields (reply headers, gRPC metadata,
// trailers) with the allow-list, in place: a field off the list goes, a
// transport header keeps its name only.
func CleanHeaders(hs []Header, idempotencyHeader string) []Header {
	out := hs[:0]
	for _, h := range hs {
		switch keep(h.Name, idempotencyHeader) {
		case redact.HeaderValue:
			out = append(out, h)
		case redact.HeaderName:
			out = append(out, Header{h.Name, ""}) // its presence is what the decoder reads; never its value
		}
	}
	clear(hs[len(out):]) // no dropped value stays reachable in the caller's buffer
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
