package parse

import "testing"

// TestIsSSEMedia: an event stream's media type in any case, with
// parameters and white space; another type, or one cut short, is not.
func TestIsSSEMedia(t *testing.T) {
	for ct, want := range map[string]bool{
		"text/event-stream": true, "TEXT/Event-Stream": true, " text/event-stream ": true,
		"text/event-stream; charset=utf-8": true, "text/event-stream;": true,
		"": false, "application/json": false, "text/event-strea": false, "text/event-streams": false,
		"text/html; x=text/event-stream": false, "application/json; charset=utf-8": false,
	} {
		if got := isSSEMedia(ct); got != want {
			t.Errorf("isSSEMedia(%q) = %v, want %v", ct, got, want)
		}
	}
}
