package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"time"
)

// agentCardPaths are where an A2A agent serves its card: the current
// well-known path first, then the one of earlier A2A versions.
var agentCardPaths = []string{"/.well-known/agent-card.json", "/.well-known/agent.json"}

// versionRE is what the tap takes from a card as a version: an identifier
// that reads like one, short enough for a label. Anything else (a card
// that is not A2A's, a value with spaces or a secret pasted into it) is
// ignored.
var versionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)

// cardVersion reads the "version" member of the upstream's A2A agent card,
// or "" when the upstream serves none (within timeout, at most 64 KiB):
// the source.version of the events when --source.version is not given.
// It is read once, at start: a tap runs beside its agent, and is restarted
// with it on a deploy.
func cardVersion(ctx context.Context, upstream *url.URL, client *http.Client, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, p := range agentCardPaths {
		u := *upstream
		u.Path = singleJoin(u.Path, p)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return ""
		}
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return ""
		}
		var card struct {
			Version any `json:"version"`
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&card)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil {
			continue
		}
		if v, ok := card.Version.(string); ok && versionRE.MatchString(v) {
			return v
		}
		return ""
	}
	return ""
}

// singleJoin joins a base path and a path that starts with "/".
func singleJoin(base, p string) string {
	for len(base) > 0 && base[len(base)-1] == '/' {
		base = base[:len(base)-1]
	}
	return base + p
}
