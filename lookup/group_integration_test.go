package lookup

import (
	"context"
	"testing"
	"time"

	"github.com/errtrail/errtrail/groups"
)

// TestStoryNamesItsGroup: the story of a reply names its error group, and
// that group is the one the group rollup holds for the reply's agent (the
// quota reply's, not the overload reply's), with the reply's version.
func TestStoryNamesItsGroup(t *testing.T) {
	conn, opts := openDB(t)
	at := time.Now().Add(-5 * time.Minute).Truncate(time.Second)
	store(t, conn, opts,
		ev{ID: "ev-group-1", At: at, Agent: "research-agent", Caller: "orchestrator-7", Status: 429, Body: rest429("slow down")},
		ev{ID: "ev-group-2", At: at.Add(time.Second), Agent: "research-agent", Caller: "orchestrator-7", Status: 503, Body: rest503})
	f := newFinder(conn, opts)
	ctx := context.Background()
	st, err := f.Story(ctx, "ev-group-1", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.Story(ctx, "ev-group-2", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := groups.Read(ctx, conn, opts.Database, groups.Filter{Agent: "research-agent", From: at.Add(-time.Hour), To: at.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var found *groups.Group
	for i := range gs {
		if gs[i].ID == st.Group {
			found = &gs[i]
		}
	}
	if found == nil || found.Kind != st.Record.Kind || found.Count != 1 || found.Example != "ev-group-1" && found.Example != st.Record.ErrorID {
		t.Fatalf("story's group %q; the rollup's groups %+v", st.Group, gs)
	}
	if other.Group == st.Group || other.Group == "" {
		t.Errorf("the overload reply's group %q; want another group than the quota reply's %q", other.Group, st.Group)
	}
}
