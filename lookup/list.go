package lookup

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/errtrail/errtrail/schema"
)

// BadQueryError: a ListQuery out of bounds or with a cursor that is not one
// of this query's. Param names the ListQuery field at fault as the HTTP
// API calls it ("agent", "caller", "kind", "from", "to", "limit",
// "cursor"; "" for the range as a whole). Reason never quotes a value of
// the query.
type BadQueryError struct {
	Param  string
	Reason string
}

func (e *BadQueryError) Error() string { return "not a usable list query: " + e.Reason }

// Kinds are the values of Row.Kind (parse.Kind), which ListQuery.Kind
// may name.
var Kinds = []string{"quota", "overload", "invalid", "auth", "not_found", "conflict", "unsupported", "internal", "unknown"}

// The range a list can span: ClickHouse's DateTime (observed_at), from
// 1970 to 2106.
var (
	MinListTime = time.Unix(0, 0).UTC()
	MaxListTime = time.Unix(1<<32-1, 0).UTC()
)

// MaxCursorLen bounds a cursor: every cursor List issues is shorter.
const MaxCursorLen = 1024

// List implements Service: the stored errors of [From, To), newest first,
// one row per event (the latest copy), filtered by agent, caller and kind,
// a page at a time. Page.From and Page.To are the range the page covers.
//
// The cursor (Page.Next) is the position after the page's last row (keyset
// pagination on observed_at_ms, event_id, agent) together with the range
// and the filters it was issued for, under an HMAC (Finder.CursorKey): a
// page never repeats or skips a row of the same query whatever is inserted
// meanwhile at other times, and a client cannot turn a cursor into another
// query's. With a Cursor, From and To may be zero (the cursor's range is
// used, so a list whose first page ended "now" keeps that end); when given
// they must equal the cursor's, and the filters always must.
func (f *Finder) List(ctx context.Context, q ListQuery) (*Page, error) {
	var after *cursor
	if q.Cursor != "" {
		c, err := f.decodeCursor(q)
		if err != nil {
			return nil, err
		}
		after = &c
		q.From, q.To = time.UnixMilli(c.From), time.UnixMilli(c.To)
	}
	q, err := CheckList(q)
	if err != nil {
		return nil, err
	}
	if err := schema.ValidDatabase(f.db()); err != nil {
		return nil, err
	}
	fromMS, toMS := q.From.UnixMilli(), q.To.UnixMilli()
	var cond []string
	args := []any{q.From.Unix(), q.To.Unix(), fromMS, toMS}
	for _, c := range []struct{ col, v string }{{"agent", q.Agent}, {"caller", q.Caller}, {"kind", q.Kind}} {
		if c.v != "" {
			cond = append(cond, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	if after != nil {
		cond = append(cond, "observed_at <= toDateTime(?)", "(observed_at_ms, event_id, agent) < (?, ?, ?)")
		args = append(args, after.MS/1000, uint64(after.MS), after.EventID, after.Agent)
	}
	where := ""
	if len(cond) > 0 {
		where = " AND " + strings.Join(cond, " AND ")
	}
	sql := fmt.Sprintf("SELECT event_id, error_id, agent, caller, kind, code, observed_at_ms FROM %s"+
		" WHERE observed_at >= toDateTime(?) AND observed_at <= toDateTime(?)"+
		" AND observed_at_ms >= ? AND observed_at_ms < ?%s"+
		" ORDER BY observed_at_ms DESC, event_id DESC, agent DESC, ingested_at DESC"+
		" LIMIT 1 BY observed_at_ms, event_id, agent LIMIT %d", f.table(schema.TableErrors), where, q.Limit+1)
	rows, err := f.Conn.Query(ctx, sql, args...)
	if err != nil {
		return nil, unavailable(err, []string{q.Agent, q.Caller})
	}
	defer rows.Close()
	page := &Page{Errors: []Match{}, From: q.From, To: q.To}
	var last cursor
	for rows.Next() {
		var m Match
		var ms uint64
		if err := rows.Scan(&m.EventID, &m.ErrorID, &m.Agent, &m.Caller, &m.Kind, &m.Code, &ms); err != nil {
			return nil, unavailable(err, []string{q.Agent, q.Caller})
		}
		if len(page.Errors) == q.Limit {
			page.Next = f.encodeCursor(last, q) // there is at least one more row
			break
		}
		m.ObservedAt = time.UnixMilli(int64(ms)).UTC()
		page.Errors = append(page.Errors, m)
		last = cursor{MS: int64(ms), EventID: m.EventID, Agent: m.Agent}
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err, []string{q.Agent, q.Caller})
	}
	return page, nil
}

// CheckList validates q as List does (without its cursor's signature,
// which only the Finder that issued it can check) and returns it with its
// defaults filled: the limit, the times in UTC and cut to the millisecond.
// Its errors are *BadQueryError. Callers that take a list from a person
// use it to refuse a bad query before asking the store.
func CheckList(q ListQuery) (ListQuery, error) {
	bad := func(param, reason string) (ListQuery, error) { return q, &BadQueryError{Param: param, Reason: reason} }
	for _, p := range []struct {
		v    *string
		name string
	}{{&q.Agent, "agent"}, {&q.Caller, "caller"}} {
		v, err := checkName(*p.v, p.name)
		if err != nil {
			return bad(p.name, err.(*BadIDError).Reason)
		}
		*p.v = v
	}
	if q.Kind != "" {
		known := false
		for _, k := range Kinds {
			known = known || k == q.Kind
		}
		if !known {
			return bad("kind", "kind is not one of "+strings.Join(Kinds, ", "))
		}
	}
	switch {
	case q.From.IsZero():
		return bad("from", "from is required")
	case q.To.IsZero():
		return bad("to", "to is required")
	case q.From.Before(MinListTime) || q.From.After(MaxListTime):
		return bad("from", "from is outside what ClickHouse stores (1970 to 2106)")
	case q.To.Before(MinListTime) || q.To.After(MaxListTime):
		return bad("to", "to is outside what ClickHouse stores (1970 to 2106)")
	case !q.From.Before(q.To):
		return bad("", "from must be before to")
	case q.To.Sub(q.From) > MaxListRange:
		return bad("", fmt.Sprintf("the range is longer than %v", MaxListRange))
	case q.Limit < 0 || q.Limit > MaxListLimit:
		return bad("limit", fmt.Sprintf("limit must be 1..%d", MaxListLimit))
	case len(q.Cursor) > MaxCursorLen:
		return bad("cursor", "the cursor is not one this service issued")
	}
	if q.Limit == 0 {
		q.Limit = DefaultListLimit
	}
	q.From, q.To = q.From.Truncate(time.Millisecond).UTC(), q.To.Truncate(time.Millisecond).UTC()
	return q, nil
}

// cursor is the position after a page's last row and the query it belongs
// to: the range in Unix milliseconds and a digest of the filters.
type cursor struct {
	MS      int64  `json:"t"`
	EventID string `json:"e"`
	Agent   string `json:"a"`
	From    int64  `json:"f"`
	To      int64  `json:"u"`
	Filters string `json:"q"`
}

// filters digests the filters a cursor belongs to (not the limit: a client
// may change the page size between pages; not the range: the cursor holds
// it).
func (q ListQuery) filters() string {
	h := sha256.New()
	for _, s := range []string{q.Agent, q.Caller, q.Kind} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// cursorMACLen is the bytes of HMAC-SHA256 a cursor carries.
const cursorMACLen = 16

// encodeCursor is base64url of the JSON position and its HMAC under the
// Finder's cursor key: opaque to clients, and a changed byte is refused,
// not read as another position or range.
func (f *Finder) encodeCursor(c cursor, q ListQuery) string {
	c.From, c.To, c.Filters = q.From.UnixMilli(), q.To.UnixMilli(), q.filters()
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(append(b, f.cursorMAC(b)...))
}

// decodeCursor reads q.Cursor and checks that it belongs to q: the filters
// equal, and From and To, when set, the cursor's range.
func (f *Finder) decodeCursor(q ListQuery) (cursor, error) {
	bad := &BadQueryError{Param: "cursor", Reason: "the cursor is not one this service issued"}
	if len(q.Cursor) > MaxCursorLen {
		return cursor{}, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
	if err != nil || len(b) <= cursorMACLen {
		return cursor{}, bad
	}
	body, mac := b[:len(b)-cursorMACLen], b[len(b)-cursorMACLen:]
	if !hmac.Equal(mac, f.cursorMAC(body)) {
		return cursor{}, bad
	}
	var c cursor
	if err := json.Unmarshal(body, &c); err != nil || c.MS < 0 || c.From < 0 || c.To <= c.From {
		return cursor{}, bad
	}
	// The filters are compared as List will use them.
	fq := q
	fq.From, fq.To = time.UnixMilli(c.From), time.UnixMilli(c.To)
	fq.Cursor = ""
	if fq, err = CheckList(fq); err != nil {
		return cursor{}, err
	}
	if c.Filters != fq.filters() ||
		(!q.From.IsZero() && q.From.UnixMilli() != c.From) || (!q.To.IsZero() && q.To.UnixMilli() != c.To) {
		return cursor{}, &BadQueryError{Param: "cursor", Reason: "the cursor belongs to another query: give it with the agent, caller and kind of the page it came from, and without from and to (or with the same)"}
	}
	return c, nil
}

// cursorMAC is HMAC-SHA256 of b under the cursor key, cut to cursorMACLen.
func (f *Finder) cursorMAC(b []byte) []byte {
	m := hmac.New(sha256.New, f.cursorKey())
	m.Write(b)
	return m.Sum(nil)[:cursorMACLen]
}

// cursorKey is CursorKey, else a key derived from the Redactor's (the
// same on every replica of a deployment), else one drawn at random for
// this Finder's life.
func (f *Finder) cursorKey() []byte {
	if len(f.CursorKey) > 0 {
		return f.CursorKey
	}
	f.keyOnce.Do(func() {
		f.key = make([]byte, 32)
		if f.Redactor != nil {
			f.mu.Lock()
			for i := range 4 {
				binary.BigEndian.PutUint64(f.key[8*i:], f.Redactor.Hash64(fmt.Sprintf("errtrail list cursor key %d", i)))
			}
			f.mu.Unlock()
			return
		}
		if _, err := rand.Read(f.key); err != nil {
			panic("lookup: no randomness for the cursor key: " + err.Error())
		}
	})
	return f.key
}
