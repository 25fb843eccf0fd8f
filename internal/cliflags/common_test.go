package cliflags

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestEnvNames(t *testing.T) {
	if got := EnvNames("ERRTRAIL_TAP_", "kafka.brokers", "kafka.", "log."); !slices.Equal(got, []string{"ERRTRAIL_TAP_KAFKA_BROKERS", "ERRTRAIL_KAFKA_BROKERS"}) {
		t.Errorf("shared flag: %v", got)
	}
	if got := EnvNames("ERRTRAIL_TAP_", "source.kind", "kafka.", "log."); !slices.Equal(got, []string{"ERRTRAIL_TAP_SOURCE_KIND"}) {
		t.Errorf("own flag: %v", got)
	}
	if got := EnvNames("ERRTRAIL_LOOKUP_", "http.read-header-timeout"); !slices.Equal(got, []string{"ERRTRAIL_LOOKUP_HTTP_READ_HEADER_TIMEOUT"}) {
		t.Errorf("dash: %v", got)
	}
}

func TestLogger(t *testing.T) {
	var b bytes.Buffer
	l, err := Logger(&b, "warn", "json")
	if err != nil {
		t.Fatal(err)
	}
	l.Info("hidden")
	l.Warn("shown")
	if strings.Contains(b.String(), "hidden") || !strings.Contains(b.String(), `"msg":"shown"`) {
		t.Errorf("level or format ignored: %q", b.String())
	}
	for _, bad := range [][2]string{{"loud", "text"}, {"info", "xml"}} {
		if _, err := Logger(&b, bad[0], bad[1]); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestBaseURL(t *testing.T) {
	if got, err := BaseURL("links.x", "https://errtrail.example.com/support/"); err != nil || got != "https://errtrail.example.com/support" {
		t.Errorf("got %q, %v", got, err)
	}
	if got, err := BaseURL("links.x", ""); err != nil || got != "" {
		t.Errorf("empty: %q, %v", got, err)
	}
	for _, bad := range []string{"ftp://x", "https://", "https://u:secret@host", "https://h/?q=1", "https://h/#f", "host:80"} {
		_, err := BaseURL("links.x", bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("the error quotes the URL: %v", err)
		}
	}
}
