package main

import "github.com/errtrail/errtrail/internal/tracelink"

// traceURLFlag registers --links.trace-url (serve and lookup) and returns
// the function that validates it after parsing.
func traceURLFlag(c *common) func() (tracelink.Template, error) {
	v := c.fs.String("links.trace-url", "", "link a story to its trace: an http(s) URL template holding {trace_id} and optionally {span_id}, e.g. https://tempo.example/trace/{trace_id} (none without)")
	return func() (tracelink.Template, error) { return tracelink.Parse("links.trace-url", *v) }
}
