package cmdkit

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// TestOps: /healthz answers ok whether or not the process is ready;
// /readyz answers 200 "ready" (with its detail) while ready says so and
// 503 with the reason, never "ready", while it does not; /metrics serves
// the process's own registry and nothing of the global one.
func TestOps(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "cmdkit_test_total", Help: "A test counter."})
	reg.MustRegister(c)
	c.Add(3)
	var readyErr error
	detail := ""
	h := Ops(reg, func() (string, error) { return detail, readyErr })

	for _, tc := range []struct {
		err        error
		detail     string
		code       int
		body       string
		healthCode int
	}{
		{nil, "", 200, "ready\n", 200},
		{nil, "last evaluation 12:00", 200, "ready: last evaluation 12:00\n", 200},
		{errors.New("starting"), "ignored", 503, "not ready: starting\n", 200},
	} {
		readyErr, detail = tc.err, tc.detail
		if code, body := get(t, h, "/readyz"); code != tc.code || body != tc.body {
			t.Errorf("ready %v: /readyz %d %q; want %d %q", tc.err, code, body, tc.code, tc.body)
		}
		if code, body := get(t, h, "/healthz"); code != tc.healthCode || body != "ok\n" {
			t.Errorf("ready %v: /healthz %d %q; want 200 ok", tc.err, code, body)
		}
	}
	code, body := get(t, h, "/metrics")
	if code != 200 || !strings.Contains(body, "cmdkit_test_total 3") {
		t.Errorf("/metrics %d: want the registry's counter at 3:\n%s", code, body)
	}
	if strings.Contains(body, "go_goroutines") {
		t.Error("/metrics serves the global registry's collectors")
	}
	if code, _ := get(t, h, "/other"); code != http.StatusNotFound {
		t.Errorf("/other: %d; want 404", code)
	}
}
