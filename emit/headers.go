package emit

import (
	"net/http"
	"strings"

	"github.com/errtrail/errtrail/internal/keep"
)

// This file keeps credentials and customer values in the process: an
// event carries only the reply headers on errtrail's allow-list (the
// headers the decoder reads), declared once in internal/keep: the decoder
// keeps the same list on ingest (redact.KeptHeader). Every other header is
// dropped, whatever its name.

// DropHeader reports whether a header's value must not leave the process:
// every header off the allow-list (redact.KeptHeader) — Authorization,
// Set-Cookie, Location, WWW-Authenticate, vendor headers, X-Key, … — and the
// protocols' transport headers, whose presence alone travels
// (Mcp-Session-Id is a session credential). The idempotency key header
// never leaves either: the key travels only as request.idempotency_key,
// which ingest stores as a hash.
func DropHeader(name, idempotencyHeader string) bool {
	return headerUse(name, idempotencyHeader) != keep.Value
}

// headerUse is what of header name may leave the process.
func headerUse(name, idempotencyHeader string) keep.Use {
	if strings.EqualFold(name, "Idempotency-Key") || (idempotencyHeader != "" && strings.EqualFold(name, idempotencyHeader)) {
		return keep.Drop
	}
	return keep.Header(name)
}

// AppendHeaders appends the fields of h that may leave the process to dst,
// in a stable order (sorted by name, values in order). idempotencyHeader is
// the configured idempotency key header ("" for the default only).
func AppendHeaders(dst []Header, h http.Header, idempotencyHeader string) []Header {
	start := len(dst)
	for name, vs := range h {
		switch headerUse(name, idempotencyHeader) {
		case keep.Value:
			for _, v := range vs {
				dst = append(dst, Header{name, v})
			}
		case keep.Name:
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
		switch headerUse(h.Name, idempotencyHeader) {
		case keep.Value:
			out = append(out, h)
		case keep.Name:
			out = append(out, Header{h.Name, ""}) // its presence is what the decoder reads; never its value
		}
	}
	clear(hs[len(out):]) // no dropped value stays reachable in the caller's buffer
	return out
}

// CleanEndpoint applies the structure of the decoder's endpoint rule
// (internal/keep, which redact.Redactor.Endpoint applies after its text
// pass): userinfo in every form, query and fragment dropped, value-like path
// segments as {id}, a random-looking host as {host}. The decoder runs the
// whole rule again on ingest; TestCleanEndpointStoresAsDecoder checks that
// it stores the same endpoint from the cleaned value as from the original.
// emit leaves out the text pass, whose phone-number check would link
// libphonenumber's metadata into every agent. Endpoints carry no hashes,
// so no deployment key is needed here.
func CleanEndpoint(s string) string {
	if s == "" {
		return ""
	}
	var buf [128]byte
	out := keep.AppendEndpoint(buf[:0], s, nil)
	if string(out) == s {
		return s
	}
	return string(out)
}
