package lookup

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/errtrail/errtrail/alerter"
)

// BadQueryError: a ListQuery out of bounds or with a cursor that is not one
// of this query's. Reason never quotes a value of the query.
type BadQueryError struct{ Reason string }

func (e *BadQueryError) Error() string { return "not a usable list query: " + e.Reason }

// Kinds are the values of Record.Kind (parse.Kind), which ListQuery.Kind
// may name.
var Kinds = []string{"quota", "overload", "invalid", "auth", "not_found", "conflict", "unsupported", "internal", "unknown"}

// List implements Service: the stored errors of [From, To), newest first,
// one row per event (the latest copy), filtered by agent, caller and kind,
// a page at a time. The cursor is the position after the page's last row
// (keyset pagination on observed_at_ms, event_id, agent), bound to the
// query it came from, so a page never repeats or skips a row of the same
// query whatever is inserted meanwhile at other times.
func (f *Finder) List(ctx context.Context, q ListQuery) (*Page, error) {
	q, err := checkList(q)
	if err != nil {
		return nil, err
	}
	if err := alerter.ValidDatabase(f.db()); err != nil {
		return nil, err
	}
	digest := q.digest()
	var after *cursor
	if q.Cursor != "" {
		c, err := decodeCursor(q.Cursor, digest)
		if err != nil {
			return nil, err
		}
		after = &c
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
	sql := fmt.Sprintf("SELECT event_id, error_id, agent, caller, kind, code, observed_at_ms FROM %s.errors"+
		" WHERE observed_at >= toDateTime(?) AND observed_at <= toDateTime(?)"+
		" AND observed_at_ms >= ? AND observed_at_ms < ?%s"+
		" ORDER BY observed_at_ms DESC, event_id DESC, agent DESC, ingested_at DESC"+
		" LIMIT 1 BY observed_at_ms, event_id, agent LIMIT %d", f.db(), where, q.Limit+1)
	rows, err := f.Conn.Query(ctx, sql, args...)
	if err != nil {
		return nil, unavailable(err, []string{q.Agent, q.Caller})
	}
	defer rows.Close()
	page := &Page{Errors: []Match{}}
	var last cursor
	for rows.Next() {
		var m Match
		var ms uint64
		if err := rows.Scan(&m.EventID, &m.ErrorID, &m.Agent, &m.Caller, &m.Kind, &m.Code, &ms); err != nil {
			return nil, unavailable(err, []string{q.Agent, q.Caller})
		}
		if len(page.Errors) == q.Limit {
			page.Next = encodeCursor(last, digest) // there is at least one more row
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

// checkList validates q and fills its defaults.
func checkList(q ListQuery) (ListQuery, error) {
	var err error
	if q.Agent, err = checkName(q.Agent, "agent"); err != nil {
		return q, &BadQueryError{Reason: err.(*BadIDError).Reason}
	}
	if q.Caller, err = checkName(q.Caller, "caller"); err != nil {
		return q, &BadQueryError{Reason: err.(*BadIDError).Reason}
	}
	if q.Kind != "" {
		known := false
		for _, k := range Kinds {
			known = known || k == q.Kind
		}
		if !known {
			return q, &BadQueryError{Reason: "kind is not one of " + strings.Join(Kinds, ", ")}
		}
	}
	switch {
	case q.From.IsZero() || q.To.IsZero():
		return q, &BadQueryError{Reason: "from and to are required"}
	case !q.From.Before(q.To):
		return q, &BadQueryError{Reason: "from must be before to"}
	case q.To.Sub(q.From) > MaxListRange:
		return q, &BadQueryError{Reason: fmt.Sprintf("the range is longer than %v", MaxListRange)}
	case q.From.Unix() < 0 || q.To.Unix() > 1<<32-1:
		return q, &BadQueryError{Reason: "the range is outside what ClickHouse stores"}
	case q.Limit < 0 || q.Limit > MaxListLimit:
		return q, &BadQueryError{Reason: fmt.Sprintf("limit must be 1..%d", MaxListLimit)}
	case len(q.Cursor) > 1024:
		return q, &BadQueryError{Reason: "the cursor is not one this service issued"}
	}
	if q.Limit == 0 {
		q.Limit = DefaultListLimit
	}
	q.From, q.To = q.From.UTC(), q.To.UTC()
	return q, nil
}

// cursor is the position after a page's last row.
type cursor struct {
	MS      int64  `json:"t"`
	EventID string `json:"e"`
	Agent   string `json:"a"`
	Query   string `json:"q"` // the digest of the query it belongs to
}

// digest identifies the query a cursor belongs to (not the limit: a client
// may change the page size between pages).
func (q ListQuery) digest() string {
	h := sha256.New()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(q.From.UnixMilli()))
	binary.BigEndian.PutUint64(b[8:], uint64(q.To.UnixMilli()))
	h.Write(b[:])
	for _, s := range []string{q.Agent, q.Caller, q.Kind} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])
}

// encodeCursor is base64url of the JSON position and 8 bytes of its
// SHA-256: opaque to clients, and a changed byte is refused, not read as
// another position.
func encodeCursor(c cursor, digest string) string {
	c.Query = digest
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(append(b, sum[:8]...))
}

func decodeCursor(s, digest string) (cursor, error) {
	bad := &BadQueryError{Reason: "the cursor is not one this service issued for this query"}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 9 {
		return cursor{}, bad
	}
	body, sum := b[:len(b)-8], b[len(b)-8:]
	want := sha256.Sum256(body)
	if string(want[:8]) != string(sum) {
		return cursor{}, bad
	}
	var c cursor
	if err := json.Unmarshal(body, &c); err != nil || c.Query != digest || c.MS < 0 {
		return cursor{}, bad
	}
	return c, nil
}
