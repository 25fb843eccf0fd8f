package api

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// errNoStore is what the stub connection answers every query with.
var errNoStore = errors.New("stub store: not asked in a unit test")

// stubConn is a STUB driver.Conn for FuzzUnitParameters: it records the
// arguments of every query and answers each with errNoStore, so that the
// real lookup.Finder and report.ClickHouse run their own checks and any
// question that passes them ends as 503 unavailable.
type stubConn struct {
	driver.Conn // nil: any other method panics
	mu          sync.Mutex
	args        [][]any
}

func (c *stubConn) record(args []any) {
	c.mu.Lock()
	c.args = append(c.args, args)
	c.mu.Unlock()
}

func (c *stubConn) Query(_ context.Context, _ string, args ...any) (driver.Rows, error) {
	c.record(args)
	return nil, errNoStore
}

func (c *stubConn) QueryRow(_ context.Context, _ string, args ...any) driver.Row {
	c.record(args)
	return errRow{}
}

func (c *stubConn) Select(_ context.Context, _ any, _ string, args ...any) error {
	c.record(args)
	return errNoStore
}

type errRow struct{}

func (errRow) Err() error           { return errNoStore }
func (errRow) Scan(...any) error    { return errNoStore }
func (errRow) ScanStruct(any) error { return errNoStore }

// FuzzUnitParameters: whatever the query string and path value, the api
// on the real lookup.Finder and report.ClickHouse (over a STUB connection
// that refuses every query) answers 400 for a bad parameter or reaches
// the store, never 500 or another 5xx than the store's 503; a 400 names
// a parameter of the route or none, and no answer repeats the value.
// Every value that reaches the store is within its bounds.
func FuzzUnitParameters(f *testing.F) {
	for _, s := range [][2]string{
		{"agent=a&limit=2", "alpha"},
		{"cursor=garbage", "x"},
		{"from=1900-01-01T00:00:00Z&to=1900-01-02T00:00:00Z", "x"},
		{"to=2200-01-01T00:00:00Z", "x"},
		{"agent=" + strings.Repeat("a", 300), strings.Repeat("b", 300)},
		{"kind=bogus&caller=%E2%80%A8", "a\u2028b"},
		{"from=2106-02-07T06:28:15Z&to=2106-02-07T06:28:15.5Z", "x"},
		{"cursor=eyJ0IjoxfQ&to=2026-01-01T00:00:00Z", "%2F%2F"},
		{"limit=500&from=1970-01-01T00:00:00Z&to=1970-01-01T00:00:00.001Z", ""},
	} {
		f.Add(s[0], s[1])
	}
	conn := &stubConn{}
	finder := &lookup.Finder{Conn: conn, Database: "errtrail", CursorKey: []byte("fuzz")}
	rep := &report.ClickHouse{Conn: conn, Database: "errtrail"}
	cfg := DefaultConfig()
	cfg.RPS = 0
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := New(cfg, finder, rep, prometheus.NewRegistry())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, query, value string) {
		seg := url.PathEscape(value)
		for _, target := range []string{
			"/v1/errors?" + query,
			"/v1/errors/" + seg + "?" + query,
			"/v1/agents/" + seg + "/report?" + query,
			"/v1/report?" + query,
		} {
			req, err := http.NewRequest(http.MethodGet, "http://errtrail.test"+target, nil)
			if err != nil {
				continue // not a request a client can send
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			code := rec.Code
			switch {
			case code >= 500 && code != http.StatusServiceUnavailable:
				t.Fatalf("%q: %d %s", target, code, rec.Body.String())
			case code == http.StatusServiceUnavailable && !strings.Contains(rec.Body.String(), `"code":"unavailable"`):
				t.Fatalf("%q: 503 that is not the store's: %s", target, rec.Body.String())
			}
			if len(value) >= 8 && strings.Contains(rec.Body.String(), value) {
				t.Fatalf("%q: the answer repeats the value: %s", target, rec.Body.String())
			}
		}
		conn.mu.Lock()
		asked := conn.args
		conn.args = nil
		conn.mu.Unlock()
		for _, args := range asked {
			for _, a := range args {
				switch v := a.(type) {
				case string:
					if len(v) > lookup.MaxIDLen {
						t.Fatalf("a value of %d bytes reached the store", len(v))
					}
				case int64: // Unix seconds or milliseconds
					if v < 0 || v > lookup.MaxListTime.UnixMilli() {
						t.Fatalf("a time %d out of ClickHouse's range reached the store", v)
					}
				}
			}
		}
	})
}
