package web

import (
	"net/http"
	"testing"
	"time"

	"github.com/errtrail/errtrail/lookup"
)

// TestUnitStoryObservers: the page tells one reply seen by several
// observers as one story: each observer named, the record's copy marked,
// another copy linked by its event_id, and a copy that saw a different
// reply (a gateway rewrite) with each field it saw differently. Fake
// service.
func TestUnitStoryObservers(t *testing.T) {
	r := newRig(Config{})
	s := sampleStory()
	s.Observers = lookup.Observers{Joined: true, Summary: "Seen by 3 observers: the agent (host-a), a gateway (edge-1) and the client (laptop).",
		Copies: []lookup.Copy{
			{EventID: "run7:2s", SourceKind: "agent", SourceID: "host-a", ObservedAt: t0, This: true, Differs: []lookup.Difference{}},
			{EventID: "edge-1:9", SourceKind: "gateway", SourceID: "edge-1", ObservedAt: t0.Add(2 * time.Millisecond),
				Differs: []lookup.Difference{{Field: "http_status", Record: "429", Copy: "502"}}},
			{EventID: "laptop:4", SourceKind: "client", SourceID: "laptop", ObservedAt: t0.Add(5 * time.Millisecond), Differs: []lookup.Difference{}},
		}}
	r.svc.story = s
	res, body := r.get(t, storyPath(typedID))
	wantStatus(t, res, http.StatusOK, body)
	wantText(t, body,
		`<h2 id="observers">Seen by</h2>`,
		`<p class="observers">Seen by 3 observers: the agent (host-a), a gateway (edge-1) and the client (laptop).</p>`,
		`<tr class="this">`, `<th scope="row">agent <strong class="mark">(this record)</strong></th>`, `<td>host-a</td>`,
		`<tr class="broke">`, `<th scope="row">gateway</th>`,
		`<a href="/errors?event_id=edge-1%3A9&amp;id=edge-1%3A9"><code>edge-1:9</code></a>`,
		`<strong class="violation">a different reply</strong>: <code>http_status</code> 502 (this record: 429)`,
		`<th scope="row">client</th>`, `<td>the same reply</td>`,
	)
	wantIDOnlyInInput(t, body, typedID)

	// A story without observers (an older server) has no such section.
	s.Observers = lookup.Observers{}
	_, body = r.get(t, storyPath(typedID))
	wantNoText(t, body, `id="observers"`)
}

// TestUnitAmbiguousObservers: several distinct replies list each row with
// its observer and its reply's number, and the heading counts replies and
// records apart.
func TestUnitAmbiguousObservers(t *testing.T) {
	r := newRig(Config{})
	r.svc.storyErr = &lookup.AmbiguousError{Total: 4, Replies: 2, Matches: []lookup.Match{
		{EventID: "host-a:2", SourceKind: "agent", SourceID: "host-a", Reply: 1, MatchedAs: "message_id", Agent: "research-agent", Kind: "quota", ObservedAt: t0},
		{EventID: "laptop:2", SourceKind: "client", SourceID: "laptop", Reply: 1, MatchedAs: "message_id", Agent: "research-agent", Kind: "quota", ObservedAt: t0},
		{EventID: "host-a:1", SourceKind: "agent", SourceID: "host-a", Reply: 2, MatchedAs: "message_id", Agent: "research-agent", Kind: "quota", ObservedAt: t0.Add(-time.Second)},
		{EventID: "laptop:1", SourceKind: "client", SourceID: "laptop", Reply: 2, MatchedAs: "message_id", Agent: "research-agent", Kind: "quota", ObservedAt: t0.Add(-time.Second)},
	}}
	res, body := r.get(t, storyPath(typedID))
	wantStatus(t, res, http.StatusMultipleChoices, body)
	wantText(t, body, `This id names 2 distinct error replies, stored as 4 records`,
		`<th scope="col">Observer</th>`,
		`<tr><td>1</td><td><a href="/errors?event_id=laptop%3A2&amp;id=laptop%3A2"><code>laptop:2</code></a></td><td>client (laptop)</td>`,
		`<tr><td>2</td><td><a href="/errors?event_id=host-a%3A1&amp;id=host-a%3A1"><code>host-a:1</code></a></td><td>agent (host-a)</td>`)
	wantIDOnlyInInput(t, body, typedID)
}
