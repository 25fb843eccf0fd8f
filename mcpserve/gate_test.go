package mcpserve

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/errtrail/errtrail/api"
	"github.com/errtrail/errtrail/lookup"
)

// blockingStore holds every story until release is closed.
type blockingStore struct {
	fakeStore
	entered chan struct{}
	release chan struct{}
}

func (s *blockingStore) Story(ctx context.Context, id string, opt lookup.FindOptions) (*lookup.Story, error) {
	s.entered <- struct{}{}
	<-s.release
	return s.fakeStore.Story(ctx, id, opt)
}

// TestUnitGatedLookups (fakes): behind the API's gates (api.Server.Services)
// a client over its share of stories gets a tool error that says when to
// retry, while its first story is answered once the store lets it go.
func TestUnitGatedLookups(t *testing.T) {
	st := &blockingStore{entered: make(chan struct{}, 1), release: make(chan struct{})}
	cfg := api.DefaultConfig()
	cfg.RPS = 0
	cfg.Lookups = api.GateLimits{Concurrency: 1, PerClient: 1, QueueLength: 0}
	guard, err := api.New(cfg, st, st, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	svc, rep := guard.Services()
	srv, err := New(Config{Lookup: svc, Reports: rep, Incidents: st})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectTo(t, srv)
	var wg sync.WaitGroup
	wg.Add(1)
	var firstErr bool
	var firstText string
	go func() {
		defer wg.Done()
		firstErr, firstText = call(t, cs, "lookup", map[string]any{"id": "ev-1"})
	}()
	select {
	case <-st.entered:
	case <-time.After(time.Minute):
		t.Fatal("the first lookup never reached the store")
	}
	isErr, text := call(t, cs, "lookup", map[string]any{"id": "ev-2"})
	if !isErr || !strings.Contains(text, "retry in a second") {
		t.Errorf("second lookup while the first holds the client's share: error %v, %q; want a tool error saying when to retry", isErr, text)
	}
	close(st.release)
	wg.Wait()
	if firstErr || !strings.Contains(firstText, "QUOTA") {
		t.Errorf("first lookup: error %v, %q; want the story", firstErr, firstText)
	}
}
