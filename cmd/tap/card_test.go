package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// TestUnitCardVersion: the tap takes the version of the upstream's A2A
// agent card (the current well-known path, else the older one), and
// nothing from a card without one, one whose version is not a version-like
// identifier, or an upstream without a card. (A local HTTP server, not a
// fake: it serves cards.)
func TestUnitCardVersion(t *testing.T) {
	for _, c := range []struct {
		name  string
		cards map[string]string
		want  string
	}{
		{"current path", map[string]string{"/base/.well-known/agent-card.json": `{"name":"billing","version":"1.5.0"}`}, "1.5.0"},
		{"older path", map[string]string{"/base/.well-known/agent.json": `{"name":"billing","version":"v2.0.0-rc.1"}`}, "v2.0.0-rc.1"},
		{"no version", map[string]string{"/base/.well-known/agent-card.json": `{"name":"billing"}`}, ""},
		{"version not a string", map[string]string{"/base/.well-known/agent-card.json": `{"version":150}`}, ""},
		{"version with a secret", map[string]string{"/base/.well-known/agent-card.json": `{"version":"Bearer abcdefghijklmnop"}`}, ""},
		{"not JSON", map[string]string{"/base/.well-known/agent-card.json": `<html>`}, ""},
		{"no card", nil, ""},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, ok := c.cards[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}))
		u, _ := url.Parse(srv.URL + "/base/")
		if got := cardVersion(context.Background(), u, srv.Client(), 5*time.Second); got != c.want {
			t.Errorf("%s: %q; want %q", c.name, got, c.want)
		}
		srv.Close()
	}
}
