package lookup

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/schema"
)

// JSONRPCRange is how far back a JSON-RPC id is looked for: clients reuse
// small ids, so only the agent's recent rows are read.
const JSONRPCRange = 7 * 24 * time.Hour

// MaxMatches bounds AmbiguousError.Matches.
const MaxMatches = 20

// candidates returns the values a stored id column may hold for id: the id
// itself and, with a Redactor, the keyed hash ingest stored when it could
// not keep the id.
func (f *Finder) candidates(id string) []string {
	out := []string{id}
	if f.Redactor != nil {
		f.mu.Lock()
		h := f.Redactor.Lookup(id)
		f.mu.Unlock()
		out = append(out, h)
	}
	return out
}

// find returns the rows that carry id, newest first, narrowed to agent.
func (f *Finder) find(ctx context.Context, conn driver.Conn, id, agent string) ([]schema.ErrorRow, []string, error) {
	cands := f.candidates(id)
	var rows []schema.ErrorRow
	if len(id) >= MinIDLen {
		var err error
		rows, err = schema.LookupAny(ctx, conn, schema.Options{Database: f.db()}, cands...)
		if err != nil {
			return nil, cands, err
		}
		if agent != "" {
			kept := rows[:0]
			for _, r := range rows {
				if r.Agent == agent {
					kept = append(kept, r)
				}
			}
			rows = kept
		}
	}
	if len(rows) == 0 && agent != "" {
		var err error
		if rows, err = f.findJSONRPC(ctx, conn, cands, agent); err != nil {
			return nil, cands, err
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := observedAt(&rows[i]), observedAt(&rows[j])
		if !a.Equal(b) {
			return a.After(b)
		}
		return rows[i].EventID > rows[j].EventID
	})
	return rows, cands, nil
}

// findJSONRPC reads the agent's rows of the last JSONRPCRange whose
// JSON-RPC id is one of cands (jsonrpc_id is not in error_lookup: the
// agent's rows are read by the sorting-key prefix agent, observed_at).
func (f *Finder) findJSONRPC(ctx context.Context, conn driver.Conn, cands []string, agent string) ([]schema.ErrorRow, error) {
	now := f.now()
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(cands)), ", ")
	q := fmt.Sprintf("SELECT %s FROM %s PREWHERE jsonrpc_id IN (%s)"+
		" WHERE agent = ? AND observed_at >= toDateTime(?) AND observed_at <= toDateTime(?)"+
		" ORDER BY observed_at DESC, event_id DESC, ingested_at DESC LIMIT 1 BY agent, observed_at, event_id LIMIT 1000",
		schema.ErrorsSelect(), f.table(schema.TableErrors), marks)
	args := make([]any, 0, len(cands)+3)
	for _, c := range cands {
		args = append(args, c)
	}
	args = append(args, agent, now.Add(-JSONRPCRange).Unix(), now.Unix()+60)
	var rows []schema.ErrorRow
	if err := conn.Select(ctx, &rows, q, args...); err != nil {
		return nil, err
	}
	return rows, nil
}

// matchedAs names the id column of r that holds one of cands, in the order
// a support engineer would name them.
func matchedAs(r *schema.ErrorRow, cands []string) string {
	for _, c := range []struct {
		name, v string
	}{
		{"error_id", r.ErrorID}, {"request_id", r.RequestID}, {"http_request_id", r.HTTPRequestID},
		{"event_id", r.EventID}, {"message_id", r.MessageID}, {"task_id", r.TaskID}, {"jsonrpc_id", r.JSONRPCID},
	} {
		for _, v := range cands {
			if c.v != "" && c.v == v {
				return c.name
			}
		}
	}
	return ""
}
