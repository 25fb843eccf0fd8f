// Package tracelink builds the link from a stored record to its trace in a
// tracing system (Tempo, Jaeger, Grafana, Honeycomb…) from the operator's
// template, --links.trace-url of `errtrail serve` and `errtrail lookup`.
//
// A template is an absolute http or https URL holding {trace_id} and
// optionally {span_id}; any other scheme (javascript:, data:, file:), a URL
// with credentials or an unknown placeholder is refused when the command
// starts, with an error that names the flag. A link is only built for a
// well-formed W3C trace id (32 lowercase hex digits, not all zero) and span
// id (16, not all zero); its values are escaped for the part of the URL
// they land in, so that a stored value can never change the link's scheme,
// host or query.
package tracelink
