package redact

import "github.com/errtrail/errtrail/internal/keep"

// Field paths and endpoints keep their structure: a person reading a row
// must still see which field was wrong or which route failed. The segments
// that look like values (an e-mail used as a map key, a customer id in a
// route, a token in a path) are replaced. The structure rule is declared
// in internal/keep (emit applies it without the text pass); here the text
// pass runs first.

// AppendPath appends the field path s (message.parts[0].text,
// /filters/features_all, contacts[alice@example.com].phone) with its
// value-like segments replaced by {value}.
func (r *Redactor) AppendPath(dst []byte, s string) []byte {
	return keep.AppendPath(dst, s, r.textView)
}

// Path is AppendPath for a string.
func (r *Redactor) Path(s string) string {
	out := r.AppendPath(nil, s)
	if string(out) == s {
		return s
	}
	return string(out)
}

// AppendEndpoint appends an endpoint URL with only what identifies the
// route: scheme, host, port and the path with value-like segments as {id}.
// Userinfo — with or without a scheme, and also when it holds an
// unencoded '/' or '@' — the query and the fragment are dropped.
func (r *Redactor) AppendEndpoint(dst []byte, s string) []byte {
	return keep.AppendEndpoint(dst, s, r.textView)
}

// Endpoint is AppendEndpoint for a string.
func (r *Redactor) Endpoint(s string) string {
	out := r.AppendEndpoint(nil, s)
	if string(out) == s {
		return s
	}
	return string(out)
}

// text is the text pass for the structure rules: a view of r.scratch,
// valid until the next call.
func (r *Redactor) text(s string) (string, bool) {
	out, changed := r.AppendText(r.scratch[:0], s) // its work counted (Work)
	r.scratch = out
	if !changed {
		return s, false
	}
	return bstr(out), true
}

// PathView is AppendPath through the memo: the result is s itself or a view
// valid until the next call on r.
func (r *Redactor) PathView(s string) string {
	return r.view(s, kindPath, r.AppendPath)
}

// EndpointView is AppendEndpoint through the memo: the result is s itself
// or a view valid until the next call on r.
func (r *Redactor) EndpointView(s string) string {
	return r.view(s, kindEndpoint, r.AppendEndpoint)
}

func (r *Redactor) view(s string, kind uint8, f func([]byte, string) []byte) string {
	if s == "" {
		return s
	}
	slot, hit := r.memo.find(s, kind)
	if hit {
		if slot.keep {
			return s
		}
		return bstr(slot.out)
	}
	r.out = f(r.out[:0], s)
	if bstr(r.out) == s {
		r.memo.store(slot, s, kind, true, nil)
		return s
	}
	r.memo.store(slot, s, kind, false, r.out)
	return bstr(r.out)
}
