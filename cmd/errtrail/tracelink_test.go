package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/errtrail/errtrail/internal/stackload"
)

// TestUnitTraceURLRefusedAtStart: serve and lookup refuse a trace link
// template that is not an http(s) URL (a javascript: one above all) with a
// usage error naming the flag, before they contact ClickHouse (a closed
// port here: asking it would exit 4, unavailable, instead). A good template,
// also from the environment, is accepted.
func TestUnitTraceURLRefusedAtStart(t *testing.T) {
	closed := stackload.ClosedPort(t)
	for _, cmd := range [][]string{{"serve", "--http.listen-address", "127.0.0.1:0"}, {"lookup", "err_1"}} {
		for _, bad := range []string{"javascript:alert(1)//{trace_id}", "data:text/html,{trace_id}", "https://tempo.example/trace/", "https://tempo.example/{tenant}/{trace_id}"} {
			var out, errb bytes.Buffer
			args := append(append([]string{}, cmd...), "--clickhouse.addr", closed, "--links.trace-url", bad)
			code := run(context.Background(), args, &out, &errb)
			if code != exitUsage || !strings.Contains(errb.String(), "--links.trace-url") {
				t.Errorf("%s %q: exit %d (want %d), stderr %q", cmd[0], bad, code, exitUsage, errb.String())
			}
		}
	}
	// Accepted: lookup goes on to ask the (closed) store.
	var errb bytes.Buffer
	code := run(context.Background(), []string{"lookup", "err_1", "--clickhouse.addr", closed, "--query.timeout", "5s", "--links.trace-url", "https://tempo.example/trace/{trace_id}"}, &bytes.Buffer{}, &errb)
	if code != exitUnavailable {
		t.Errorf("a good template: exit %d (want %d, the store is closed), stderr %q", code, exitUnavailable, errb.String())
	}
	t.Setenv("ERRTRAIL_LOOKUP_LINKS_TRACE_URL", "javascript:x/{trace_id}")
	errb.Reset()
	if code := run(context.Background(), []string{"lookup", "err_1", "--clickhouse.addr", closed}, &bytes.Buffer{}, &errb); code != exitUsage || !strings.Contains(errb.String(), "--links.trace-url") {
		t.Errorf("from the environment: exit %d, stderr %q", code, errb.String())
	}
}
