package ingest

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestLogLimiter(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogLimiter(slog.New(slog.NewTextHandler(&buf, nil)), 3, 50*time.Millisecond)
	for i := 0; i < 100; i++ {
		l.Log(slog.LevelWarn, "bad input", "i", i)
	}
	if n := strings.Count(buf.String(), "bad input"); n != 3 {
		t.Fatalf("%d lines in the first interval; want 3", n)
	}
	time.Sleep(60 * time.Millisecond)
	l.Log(slog.LevelWarn, "bad input")
	if !strings.Contains(buf.String(), "suppressed=97") {
		t.Errorf("no summary of the 97 suppressed lines:\n%s", buf.String())
	}
}
