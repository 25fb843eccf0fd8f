package lookup

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/redact"
)

// TestUnitCursor: a cursor round-trips with its range and filters; a
// changed byte, a cut cursor, another Finder's key, other filters or
// another explicit range are refused as *BadQueryError naming the cursor;
// without from and to the cursor's range is taken.
func TestUnitCursor(t *testing.T) {
	f := &Finder{CursorKey: []byte("k1")}
	q := ListQuery{Agent: "a", From: time.UnixMilli(1_000_123), To: time.UnixMilli(2_000_456)}
	c := cursor{MS: 1500123, EventID: "ev-1", Agent: "a"}
	s := f.encodeCursor(c, q)

	for _, ok := range []ListQuery{
		{Agent: "a", Cursor: s},
		{Agent: "a", From: q.From, To: q.To, Cursor: s},
		{Agent: "a", To: q.To, Cursor: s},
		{Agent: " a ", Cursor: s}, // the filters as List uses them
	} {
		got, err := f.decodeCursor(ok)
		if err != nil || got.MS != c.MS || got.EventID != c.EventID || got.Agent != c.Agent ||
			got.From != q.From.UnixMilli() || got.To != q.To.UnixMilli() {
			t.Fatalf("%+v: %+v, %v", ok, got, err)
		}
	}
	refused := func(name string, g *Finder, bad ListQuery) {
		t.Helper()
		_, err := g.decodeCursor(bad)
		var bq *BadQueryError
		if !errors.As(err, &bq) || bq.Param != "cursor" {
			t.Errorf("%s: %v; want a *BadQueryError of the cursor", name, err)
		}
	}
	for i := 0; i < len(s); i++ {
		b := []byte(s)
		b[i] ^= 0x01
		refused("byte changed", f, ListQuery{Agent: "a", Cursor: string(b)})
	}
	refused("cut", f, ListQuery{Agent: "a", Cursor: s[:len(s)-2]})
	refused("garbage", f, ListQuery{Agent: "a", Cursor: "!!!"})
	refused("too long", f, ListQuery{Agent: "a", Cursor: strings.Repeat("A", MaxCursorLen+1)})
	refused("another key", &Finder{CursorKey: []byte("k2")}, ListQuery{Agent: "a", Cursor: s})
	refused("another agent", f, ListQuery{Agent: "b", Cursor: s})
	refused("no agent", f, ListQuery{Cursor: s})
	refused("a kind added", f, ListQuery{Agent: "a", Kind: "quota", Cursor: s})
	refused("another to", f, ListQuery{Agent: "a", From: q.From, To: q.To.Add(time.Millisecond), Cursor: s})
	refused("another from", f, ListQuery{Agent: "a", From: q.From.Add(-time.Second), Cursor: s})
}

// TestUnitCursorKey: Finders with the same redaction key take each other's
// cursors (replicas); one without a key or another key does not.
func TestUnitCursorKey(t *testing.T) {
	q := ListQuery{Agent: "a", From: time.UnixMilli(1000), To: time.UnixMilli(2000)}
	a, b := &Finder{Redactor: redact.New([]byte("deployment-1"))}, &Finder{Redactor: redact.New([]byte("deployment-1"))}
	s := a.encodeCursor(cursor{MS: 1500, EventID: "e"}, q)
	if _, err := b.decodeCursor(ListQuery{Agent: "a", Cursor: s}); err != nil {
		t.Errorf("a replica refused the cursor: %v", err)
	}
	for name, g := range map[string]*Finder{"another deployment": {Redactor: redact.New([]byte("deployment-2"))}, "no key": {}} {
		if _, err := g.decodeCursor(ListQuery{Agent: "a", Cursor: s}); err == nil {
			t.Errorf("%s took the cursor", name)
		}
	}
}

// TestUnitCheckList: each bad field is named.
func TestUnitCheckList(t *testing.T) {
	from, to := time.Unix(1000, 0), time.Unix(2000, 0)
	for want, q := range map[string]ListQuery{
		"agent":  {Agent: strings.Repeat("a", MaxIDLen+1), From: from, To: to},
		"caller": {Caller: "a\x00b", From: from, To: to},
		"kind":   {Kind: "bogus", From: from, To: to},
		"from":   {From: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), To: to},
		"to":     {From: from, To: time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)},
		"limit":  {From: from, To: to, Limit: MaxListLimit + 1},
		"":       {From: to, To: from},
	} {
		_, err := CheckList(q)
		var bq *BadQueryError
		if !errors.As(err, &bq) || bq.Param != want {
			t.Errorf("%q: %v", want, err)
		}
	}
	if _, err := CheckList(ListQuery{From: from, To: to}); err != nil {
		t.Error(err)
	}
}
