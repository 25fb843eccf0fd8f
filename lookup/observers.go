package lookup

import (
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/errtrail/errtrail/schema"
)

// One reply, several observers. The agent's middleware, a gateway in front
// of it and the client's transport may each publish the same reply: three
// rows with their own event_id (each observer numbers its own events),
// observed_at (its own clock, when it saw the reply), source and endpoint,
// and the reply's own ids in common. Rows are copies of one reply when
// (sameReply):
//
//   - they carry the same error_id, not empty: the id the agent gave that
//     reply (AAP error_id, ErrorInfo metadata error_id); every observer
//     decodes it from the same reply body. Without an error_id nothing
//     tells a copy from a retry of the same request (retries share the
//     request's message_id, request id and idempotency key), so such rows
//     are never joined;
//   - they were answered by the same agent (or one observer did not name
//     the agent: a client's transport without Config.Agent);
//   - they come from different observers (source kind and id): one
//     observer publishes each reply once, so two rows of one observer are
//     two replies (an agent that reuses an error_id across retries);
//   - they were observed within MaxObserverSkew of each other;
//   - their A2A message_id, when both carry one, is the same (it travels
//     end to end; a different one is a different request).
//
// Rows are joined greedily, oldest first, into the first reply all of whose
// copies they match.

// MaxObserverSkew bounds the time between two observers' copies of one
// reply: the client sees it after the agent sent it, a stream when it
// ends, and the observers' clocks may differ.
const MaxObserverSkew = 5 * time.Minute

// Observers says who observed the story's reply and whether they saw the
// same thing.
type Observers struct {
	// Copies has one entry per observer that published the reply, the
	// record's own (This) first, then the others in observer order
	// (agent, gateway, client, others) and time.
	Copies []Copy `json:"copies"`
	// Same: every copy decoded to the same reply (no Copy has Differs).
	Same bool `json:"same"`
	// Joined: the reply has an error_id, so copies of other observers were
	// looked for. False: without one they cannot be told from retries, and
	// the story shows its own copy only.
	Joined bool `json:"joined"`
	// Summary says the above in words.
	Summary string `json:"summary"`
}

// Copy is one observer's copy of the reply.
type Copy struct {
	EventID    string    `json:"event_id"`
	SourceKind string    `json:"source_kind"` // agent, gateway, client (event contract source.kind); "" when not said
	SourceID   string    `json:"source_id,omitempty"`
	ObservedAt time.Time `json:"observed_at"`
	Caller     string    `json:"caller,omitempty"`   // as this observer named the caller (not compared)
	Endpoint   string    `json:"endpoint,omitempty"` // where this observer saw it (not compared)
	This       bool      `json:"this"`               // the copy the story's record is
	// Differs lists the compared fields (ComparedFields) whose value in this
	// copy is not the record's; empty for the record and for an equal copy.
	Differs []Difference `json:"differs"`
}

// Difference is one field on which a copy differs from the record.
type Difference struct {
	Field  string `json:"field"`  // the record's JSON key
	Record string `json:"record"` // the record's value; "" for none
	Copy   string `json:"copy"`   // this copy's value; "" for none
}

// ComparedFields are the record's fields compared between copies: what the
// reply said, as decoded, and the request ids each observer read. Not
// compared, because they belong to the observation: event_id, observed_at,
// ingested_at, kafka_*, source_*, endpoint and caller (each observer names
// them its own way).
var ComparedFields = func() []string {
	out := make([]string, len(compared))
	for i, c := range compared {
		out[i] = c.name
	}
	return out
}()

var compared = []struct {
	name string
	get  func(*Row) string
}{
	{"protocol", func(r *Row) string { return r.Protocol }},
	{"binding", func(r *Row) string { return r.Binding }},
	{"envelope", func(r *Row) string { return r.Envelope }},
	{"http_status", func(r *Row) string { return optInt(r.HTTPStatus) }},
	{"grpc_status", func(r *Row) string { return r.GRPCStatus }},
	{"jsonrpc_code", func(r *Row) string { return optInt(r.JSONRPCCode) }},
	{"code", func(r *Row) string { return r.Code }},
	{"reason", func(r *Row) string { return r.Reason }},
	{"domain", func(r *Row) string { return r.Domain }},
	{"kind", func(r *Row) string { return r.Kind }},
	{"typed", func(r *Row) string { return strconv.FormatBool(r.Typed) }},
	{"retryable", func(r *Row) string {
		if r.Retryable == nil {
			return ""
		}
		return strconv.FormatBool(*r.Retryable)
	}},
	{"retryable_source", func(r *Row) string { return r.RetryableSource }},
	{"retry_after_ms", func(r *Row) string {
		if r.RetryAfterMS == nil {
			return ""
		}
		return strconv.FormatInt(*r.RetryAfterMS, 10)
	}},
	{"retry_after_source", func(r *Row) string { return r.RetryAfterSource }},
	{"limit", func(r *Row) string { return r.Limit }},
	{"scope", func(r *Row) string { return r.Scope }},
	{"error_id", func(r *Row) string { return r.ErrorID }},
	{"request_id", func(r *Row) string { return r.RequestID }},
	{"message", func(r *Row) string { return r.Message }},
	{"field_violations", func(r *Row) string {
		parts := make([]string, len(r.FieldViolations))
		for i, f := range r.FieldViolations {
			parts[i] = f.Field + ": " + f.Description
		}
		return strings.Join(parts, "; ")
	}},
	{"findings", func(r *Row) string { return strings.Join(r.Findings, ", ") }},
	{"method", func(r *Row) string { return r.Method }},
	{"attempt", func(r *Row) string {
		if r.Attempt == 0 {
			return ""
		}
		return strconv.Itoa(r.Attempt)
	}},
	{"http_request_id", func(r *Row) string { return r.HTTPRequestID }},
	{"jsonrpc_id", func(r *Row) string { return r.JSONRPCID }},
	{"message_id", func(r *Row) string { return r.MessageID }},
	{"task_id", func(r *Row) string { return r.TaskID }},
	{"idempotency_key_hash", func(r *Row) string { return r.IdempotencyKey }},
}

func optInt(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

// differences lists the compared fields on which c differs from rec.
func differences(rec, c *Row) []Difference {
	out := []Difference{}
	for _, f := range compared {
		if a, b := f.get(rec), f.get(c); a != b {
			out = append(out, Difference{Field: f.name, Record: a, Copy: b})
		}
	}
	return out
}

// observerRank orders the observer kinds by how directly they show what the
// agent sent: its own copy first, then a gateway's, then the client's
// (which every hop may have changed), then any other.
func observerRank(kind string) int {
	switch kind {
	case "agent":
		return 0
	case "gateway":
		return 1
	case "client":
		return 2
	}
	return 3
}

// sameObserver reports whether two rows were published by one observer.
func sameObserver(a, b *schema.ErrorRow) bool {
	return a.SourceKind == b.SourceKind && a.SourceID == b.SourceID
}

// sameReply reports whether a and b are copies of one reply seen by two
// observers (the rule above).
func sameReply(a, b *schema.ErrorRow) bool {
	if a.ErrorID == "" || a.ErrorID != b.ErrorID || !sameAgent(a.Agent, b.Agent) || sameObserver(a, b) {
		return false
	}
	if a.MessageID != "" && b.MessageID != "" && a.MessageID != b.MessageID {
		return false
	}
	d := observedAt(a).Sub(observedAt(b))
	return d <= MaxObserverSkew && d >= -MaxObserverSkew
}

// sameAgent: the same agent, or one observer did not name it (a client's
// transport configured without Config.Agent publishes no agent).
func sameAgent(a, b string) bool { return a == b || a == "" || b == "" }

// groupReplies sorts rows into replies: each group holds the indexes of the
// copies of one reply, the best observer first (observerRank, then the
// earliest, then by event_id). Groups are ordered newest reply first. It is
// pure, for the tests.
func groupReplies(rows []schema.ErrorRow) [][]int {
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := &rows[order[i]], &rows[order[j]]
		if ta, tb := observedAt(a), observedAt(b); !ta.Equal(tb) {
			return ta.Before(tb)
		}
		return a.EventID < b.EventID
	})
	var groups [][]int
next:
	for _, i := range order {
		for g := range groups {
			ok := true
			for _, j := range groups[g] {
				if !sameReply(&rows[i], &rows[j]) {
					ok = false
					break
				}
			}
			if ok {
				groups[g] = append(groups[g], i)
				continue next
			}
		}
		groups = append(groups, []int{i})
	}
	latest := func(g []int) time.Time {
		var t time.Time
		for _, i := range g {
			if o := observedAt(&rows[i]); o.After(t) {
				t = o
			}
		}
		return t
	}
	for _, g := range groups {
		sort.SliceStable(g, func(x, y int) bool {
			a, b := &rows[g[x]], &rows[g[y]]
			if ra, rb := observerRank(a.SourceKind), observerRank(b.SourceKind); ra != rb {
				return ra < rb
			}
			if ta, tb := observedAt(a), observedAt(b); !ta.Equal(tb) {
				return ta.Before(tb)
			}
			return a.EventID < b.EventID
		})
	}
	sort.SliceStable(groups, func(x, y int) bool {
		tx, ty := latest(groups[x]), latest(groups[y])
		if !tx.Equal(ty) {
			return tx.After(ty)
		}
		return rows[groups[x][0]].EventID > rows[groups[y][0]].EventID
	})
	return groups
}

// observersOf describes the copies of the story's reply: rec is the
// record's (the copy at this), copies every copy of the group, this one
// included.
func observersOf(rec *Row, copies []schema.ErrorRow) Observers {
	o := Observers{Copies: []Copy{}, Same: true, Joined: rec.ErrorID != ""}
	others := make([]Row, 0, len(copies))
	for i := range copies {
		if copies[i].EventID == rec.EventID && copies[i].SourceKind == rec.SourceKind && copies[i].SourceID == rec.SourceID {
			continue
		}
		others = append(others, recordOf(&copies[i]))
	}
	sort.SliceStable(others, func(i, j int) bool {
		a, b := &others[i], &others[j]
		if ra, rb := observerRank(a.SourceKind), observerRank(b.SourceKind); ra != rb {
			return ra < rb
		}
		return a.ObservedAt.Before(b.ObservedAt)
	})
	add := func(r *Row, this bool) {
		c := Copy{EventID: r.EventID, SourceKind: r.SourceKind, SourceID: r.SourceID, ObservedAt: r.ObservedAt,
			Caller: r.Caller, Endpoint: r.Endpoint, This: this, Differs: []Difference{}}
		if !this {
			c.Differs = differences(rec, r)
			if len(c.Differs) > 0 {
				o.Same = false
			}
		}
		o.Copies = append(o.Copies, c)
	}
	add(rec, true)
	for i := range others {
		add(&others[i], false)
	}
	o.Summary = observersSummary(&o)
	return o
}

// observerWords names an observer for people: "the agent (host-a)".
func observerWords(kind, id string) string {
	var s string
	switch kind {
	case "agent":
		s = "the agent"
	case "gateway":
		s = "a gateway"
	case "client":
		s = "the client"
	case "":
		s = "an observer that did not say its kind"
	default:
		s = "an observer of kind " + kind
	}
	if id != "" {
		s += " (" + id + ")"
	}
	return s
}

// observersSummary says Observers in words.
func observersSummary(o *Observers) string {
	c := o.Copies
	if len(c) == 1 {
		who := observerWords(c[0].SourceKind, c[0].SourceID)
		if !o.Joined {
			return "Seen by " + who + ". The reply carries no error_id, so a copy another observer published cannot be told from a retry and is not joined to this story."
		}
		return "Seen by " + who + "; no other observer's copy of this reply is stored."
	}
	names := make([]string, len(c))
	for i := range c {
		names[i] = observerWords(c[i].SourceKind, c[i].SourceID)
	}
	list := strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	s := "Seen by " + strconv.Itoa(len(c)) + " observers: " + list + "."
	if o.Same {
		return s + " They saw the same reply: every compared field is equal."
	}
	thisWho := observerWords(c[0].SourceKind, "")
	for i := 1; i < len(c); i++ {
		if len(c[i].Differs) == 0 {
			continue
		}
		who := observerWords(c[i].SourceKind, "")
		parts := make([]string, 0, len(c[i].Differs))
		for _, d := range c[i].Differs {
			parts = append(parts, d.Field+" ("+short(d.Record)+" for "+thisWho+", "+short(d.Copy)+" for "+who+")")
		}
		s += " " + upperFirst(who) + " saw a different reply: " + strings.Join(parts, ", ") + "."
	}
	return s + " So the reply was changed on its way between them (a gateway rewrite, for example)."
}

// short is a value for the summary: "none" when empty, at most 60 bytes
// (whole runes) with an ellipsis; Differs holds it whole.
func short(s string) string {
	if s == "" {
		return "none"
	}
	if len(s) <= 60 {
		return s
	}
	cut := 60
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
