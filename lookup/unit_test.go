package lookup

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/parse"
)

// secretMessage is planted in every record of the meaning tests: nothing of
// it may reach a meaning, which is said from typed fields only.
const secretMessage = "Bearer Kq3vZ8pLw2xR7mNb4TyU for dana@customer.example: SECRET-MESSAGE-TEXT"

func ptr[T any](v T) *T { return &v }

func testRecord(kind, protocol string) Row {
	return Row{Kind: kind, Protocol: protocol, Agent: "research-agent", Caller: "orchestrator-7", Method: "SendMessage",
		Code: "SOME_CODE", Limit: "per-caller", Scope: "caller", HTTPStatus: ptr(429), RetryAfterMS: ptr[int64](12000),
		Retryable: ptr(true), Message: secretMessage,
		FieldViolations: []Field{{Field: "message.messageId", Description: secretMessage}}}
}

// TestMeaningTable: one case per row of meaningTable, asserting the
// headline it produces and that no message text leaks into any sentence.
func TestMeaningTable(t *testing.T) {
	want := map[[2]string]string{
		{"*", ""}:                   `Unclassified error: research-agent answered caller orchestrator-7 with HTTP 429 and nothing typed that tells a quota from a crash.`,
		{"quota", ""}:               `Quota: caller orchestrator-7 went over research-agent's limit "per-caller".`,
		{"quota", "aap"}:            `Rate limited: caller orchestrator-7 exceeded research-agent's limit "per-caller" (AAP code SOME_CODE).`,
		{"quota", "agentrelay"}:     `Rate limited: the relay research-agent rejected caller orchestrator-7 for exceeding its rate limit (code SOME_CODE).`,
		{"overload", ""}:            `Overload: research-agent could not serve caller orchestrator-7; the reply blames the agent's capacity, not this caller's usage.`,
		{"invalid", ""}:             `Invalid request: research-agent refused the SendMessage request of caller orchestrator-7 as malformed or incomplete (code SOME_CODE).`,
		{"invalid", "aap"}:          `Invalid request: research-agent rejected the skill request of caller orchestrator-7 with AAP code SOME_CODE.`,
		{"auth", ""}:                `Authentication or authorization: research-agent refused caller orchestrator-7 (code SOME_CODE).`,
		{"not_found", ""}:           `Not found: what caller orchestrator-7 named does not exist on research-agent, or is hidden from it (code SOME_CODE).`,
		{"not_found", "a2a"}:        `Not found: research-agent does not know the task or resource that caller orchestrator-7 named (code SOME_CODE).`,
		{"not_found", "agentrelay"}: `Not found: the relay research-agent has no recipient or thread by the name caller orchestrator-7 used (code SOME_CODE).`,
		{"conflict", ""}:            `Conflict: the request of caller orchestrator-7 clashed with the current state on research-agent (code SOME_CODE).`,
		{"unsupported", ""}:         `Unsupported: research-agent does not support what caller orchestrator-7 asked for (code SOME_CODE).`,
		{"unsupported", "mcp"}:      `Unsupported: the MCP server research-agent does not offer the method or tool caller orchestrator-7 asked for (code SOME_CODE).`,
		{"internal", ""}:            `Internal error: research-agent failed while serving caller orchestrator-7 (code SOME_CODE).`,
		{"internal", "mcp"}:         `Tool error: a tool of the MCP server research-agent failed for caller orchestrator-7 (code SOME_CODE).`,
		{"unknown", ""}:             `Unclassified error: research-agent answered caller orchestrator-7 with HTTP 429 and nothing typed that tells a quota from a crash.`,
	}
	for _, row := range meaningTable {
		key := [2]string{row.Kind, row.Protocol}
		head, ok := want[key]
		if !ok {
			t.Errorf("row %v has no test case", key)
			continue
		}
		t.Run(row.Kind+"/"+row.Protocol, func(t *testing.T) {
			kind := row.Kind
			if kind == "*" {
				kind = "a_kind_this_build_does_not_know" // said as unknown, with the shared sentences
			}
			for _, h := range []health{healthUnknown, healthOK, healthOverloaded} {
				for _, retry := range []*bool{nil, ptr(true), ptr(false)} {
					r := testRecord(kind, row.Protocol)
					r.Retryable = retry
					m := meaningOf(&r, h, -1)
					if m.Headline != head {
						t.Errorf("headline %q; want %q", m.Headline, head)
					}
					all := m.Text + " " + m.Advice + " " + strings.Join(m.Details, " ")
					for _, leak := range []string{"SECRET", "Kq3v", "dana", "Bearer", "{"} {
						if strings.Contains(all, leak) {
							t.Errorf("meaning holds %q: %s", leak, all)
						}
					}
					if m.Advice == "" || len(m.Details) < 3 || m.Text == "" {
						t.Errorf("incomplete meaning %+v", m)
					}
					if h == healthUnknown && !strings.Contains(m.Details[0], "unknown") {
						t.Errorf("unknown health said as %q", m.Details[0])
					}
				}
			}
		})
	}
	if len(want) != len(meaningTable) {
		t.Errorf("%d cases for %d rows", len(want), len(meaningTable))
	}
	// The worked example of seed 002, said in full.
	r := testRecord("quota", "a2a")
	m := meaningOf(&r, healthOK, -1)
	if want := `Quota: caller orchestrator-7 went over research-agent's limit "per-caller". The alerter found no overload of research-agent at that moment. ` +
		`The reply told the caller to wait 12 s. A retry after the delay is safe because the rejection happened at admission. ` +
		`The reply names the fields: message.messageId.`; m.Text != want {
		t.Errorf("worked example:\n%s\nwant\n%s", m.Text, want)
	}
}

// TestEveryParseKindHasAMeaning: each kind of parse has a default row.
func TestEveryParseKindHasAMeaning(t *testing.T) {
	for _, k := range []parse.Kind{parse.KindQuota, parse.KindOverload, parse.KindInvalid, parse.KindAuth, parse.KindNotFound,
		parse.KindConflict, parse.KindUnsupported, parse.KindInternal, parse.KindUnknown} {
		if rowFor(string(k), "").Kind != string(k) {
			t.Errorf("kind %s has no row of its own", k)
		}
		found := false
		for _, kk := range Kinds {
			found = found || kk == string(k)
		}
		if !found {
			t.Errorf("Kinds lacks %s", k)
		}
	}
}

func TestFormatDelay(t *testing.T) {
	for ms, want := range map[int64]string{0: "0 ms", 250: "250 ms", 1000: "1 s", 1500: "1.5 s", 12000: "12 s",
		60000: "1 min", 150000: "2 min 30 s", 3600000: "1 h", 5400000: "1 h 30 min"} {
		if got := formatDelay(ms); got != want {
			t.Errorf("formatDelay(%d) = %q; want %q", ms, got, want)
		}
	}
}

// TestGuideCoversEveryFinding: every parse finding has a guide, and the
// guide is the finding's row of parse.Rules (title, level, sentence, fix),
// so the story says what the decoder's table says. docs/record.md is held
// equal to the same rows by parse's TestRulesDocTable.
func TestGuideCoversEveryFinding(t *testing.T) {
	for _, f := range parse.AllFindings {
		g, ok := GuideFor(string(f))
		r, _ := parse.RuleOf(f)
		if !ok || r == nil || g.Title == "" || g.Checks == "" || g.Change == "" {
			t.Errorf("finding %s: guide %+v", f, g)
			continue
		}
		if g.Title != r.Title || g.Level != string(r.Level) || g.Checks != r.Checks() || g.Change != r.Change {
			t.Errorf("finding %s: guide %+v differs from its rule %+v", f, g, *r)
		}
		if g.Level != "MUST" && g.Level != "SHOULD" {
			t.Errorf("finding %s: level %q", f, g.Level)
		}
	}
	if _, ok := GuideFor("a_finding_of_a_newer_ingester"); ok {
		t.Error("GuideFor knows a code that does not exist")
	}
	fs := findingsOf([]string{"body_missing", "untyped_5xx", "a_newer_code"})
	if len(fs) != 3 || fs[0].Checks == "" || fs[0].Level != "MUST" || fs[1].Level != "SHOULD" || fs[2].Change == "" || fs[2].Level != "" {
		t.Errorf("findingsOf = %+v", fs)
	}
}

func TestCheckID(t *testing.T) {
	for _, ok := range []string{"err_01HZ9RATE01", "dana.kowalski@customer.example", "a b c d", strings.Repeat("x", 256), " abcd ", "ünïcode"} {
		if _, err := checkID(ok, false); err != nil {
			t.Errorf("checkID(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "   ", "abc", strings.Repeat("x", 257), "ab\ncd", "ab\rcd", "ab\tcd", "ab\x00cd", "ab\x7fcd",
		"ab\u0085cd", "ab\u2028cd", "\xff\xfe\xfd\xfc"} {
		_, err := checkID(bad, false)
		var b *BadIDError
		if !errors.As(err, &b) {
			t.Errorf("checkID(%q) = %v; want *BadIDError", bad, err)
		} else if len(bad) > 2 && strings.Contains(err.Error(), bad) {
			t.Errorf("the reason quotes the id: %v", err)
		}
	}
	if _, err := checkID("1", true); err != nil {
		t.Errorf("a JSON-RPC id with an agent: %v", err)
	}
}

// TestChainRules: the retry rules on constructed chains.
func TestChainRules(t *testing.T) {
	base := int64(1_764_489_600_000)
	readFrom := base - time.Hour.Milliseconds()
	row := func(id string, atMS int64, attempt uint16, retryable int8, delay int64) attemptRow {
		return attemptRow{EventID: id, ObservedAtMS: uint64(atMS), Attempt: attempt, Kind: "quota", Retryable: retryable, RetryAfterMS: delay}
	}
	for _, tc := range []struct {
		name  string
		key   string
		rows  []attemptRow
		from  int64
		want  string // violations per attempt
		chain string // Attempts.Violations
	}{
		{"polite", "message_id", []attemptRow{row("a", base, 1, 1, 5000), row("b", base+5000, 2, 1, 5000), row("c", base+11000, 3, 1, -1)},
			readFrom, "[] [] []", "[]"},
		{"too soon", "message_id", []attemptRow{row("a", base, 1, 1, 12000), row("b", base+2000, 2, 1, 12000)},
			readFrom, "[] [retried_too_soon]", "[retried_too_soon]"},
		{"no delay asked: never too soon", "message_id", []attemptRow{row("a", base, 1, 1, -1), row("b", base+10, 2, 1, -1)},
			readFrom, "[] []", "[]"},
		{"non-retryable retried", "request_id", []attemptRow{row("a", base, 1, 0, -1), row("b", base+60000, 2, 0, -1)},
			readFrom, "[] [retried_non_retryable]", "[retried_non_retryable]"},
		{"unnumbered resend of a non-retryable", "request_id", []attemptRow{row("a", base, 0, 0, -1), row("b", base+1000, 0, 0, -1)},
			readFrom, "[] [retried_non_retryable]", "[retried_non_retryable]"},
		{"lower attempt is no retry", "message_id", []attemptRow{row("a", base, 2, 0, 9000), row("b", base+10, 1, 0, 9000)},
			base - 30000, "[] []", "[]"},
		{"rotated message id", "message_id", []attemptRow{row("a", base, 3, 1, 12000)},
			readFrom, "[rotated_message_id]", "[rotated_message_id]"},
		{"rotated idempotency key", "idempotency_key_hash", []attemptRow{row("a", base, 2, 1, 1000)},
			readFrom, "[rotated_idempotency_key]", "[rotated_idempotency_key]"},
		// As the alerter: a first attempt may hide before the rows read
		// when the retry is within RotationMargin plus its delay of their
		// start.
		{"retry near the read start is not rotated", "message_id", []attemptRow{row("a", base, 2, 1, 12000)},
			base - 30000, "[]", "[]"},
		{"request ids do not rotate", "request_id", []attemptRow{row("a", base, 2, 1, -1)}, readFrom, "[]", "[]"},
		{"both rules at once", "message_id", []attemptRow{row("b", base+100, 2, 0, -1), row("a", base, 1, 0, 5000)},
			readFrom, "[] [retried_too_soon retried_non_retryable]", "[retried_too_soon retried_non_retryable]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := chain(Attempts{Key: tc.key, Violations: []string{}}, tc.rows, "a", tc.from, alerterRetry)
			var per []string
			for i, a := range out.Attempts {
				per = append(per, fmt.Sprint(a.Violations))
				if (i+1 < len(out.Attempts)) != (a.Next == "error") || (a.Next != "error" && a.Next != "none_seen") {
					t.Errorf("attempt %d next %q", i, a.Next)
				}
				if (i == 0) != (a.WaitedMS == nil) {
					t.Errorf("attempt %d waited %v", i, a.WaitedMS)
				}
				if a.This != (a.EventID == "a") {
					t.Errorf("attempt %d this %v", i, a.This)
				}
			}
			if got := strings.Join(per, " "); got != tc.want {
				t.Errorf("violations %s; want %s", got, tc.want)
			}
			if got := fmt.Sprint(out.Violations); got != tc.chain {
				t.Errorf("chain violations %s; want %s", got, tc.chain)
			}
			if len(out.Rules) != len(out.Violations) {
				t.Errorf("rules %+v for %v", out.Rules, out.Violations)
			}
			for _, r := range out.Rules {
				if r.Checks == "" || r.Sentence == "" {
					t.Errorf("rule %s without its sentences", r.Code)
				}
			}
		})
	}
}

// TestContextWindow: the context spans 15 whole minutes around the record
// once they are all past; while they are not, it ends at now and lists no
// minute that has not begun (a zero there would read as "the caller
// stopped"), but always the record's own minute.
func TestContextWindow(t *testing.T) {
	rec := time.Date(2026, 12, 2, 4, 34, 31, 0, time.UTC)
	from := time.Date(2026, 12, 2, 4, 27, 0, 0, time.UTC)
	full := from.Add(ContextMinutes * time.Minute)
	for _, c := range []struct {
		name   string
		now    time.Time
		wantTo time.Time
		wantN  int
	}{
		{"all minutes past", rec.Add(time.Hour), full, ContextMinutes},
		{"now at the window's end", full, full, ContextMinutes},
		{"two seconds before its end", full.Add(-2 * time.Second), full.Add(-2 * time.Second), ContextMinutes},
		{"now mid-minute, 1m41s after the record", rec.Add(101 * time.Second), rec.Add(101 * time.Second), 10},
		{"now on a minute boundary", time.Date(2026, 12, 2, 4, 36, 0, 0, time.UTC), time.Date(2026, 12, 2, 4, 36, 0, 0, time.UTC), 9},
		{"now just after the record", rec.Add(time.Second), rec.Add(29 * time.Second), 8},
		{"record from a clock ahead of ours", rec.Add(-10 * time.Minute), rec.Add(29 * time.Second), 8},
	} {
		gotFrom, gotTo, n := contextWindow(rec, c.now)
		if !gotFrom.Equal(from) || !gotTo.Equal(c.wantTo) || n != c.wantN {
			t.Errorf("%s: window %v..%v, %d minutes; want %v..%v, %d", c.name, gotFrom, gotTo, n, from, c.wantTo, c.wantN)
			continue
		}
		last := from.Add(time.Duration(n-1) * time.Minute)
		if !last.Before(gotTo) || last.Add(time.Minute).Before(gotTo) {
			t.Errorf("%s: last minute %v does not hold the window's end %v", c.name, last, gotTo)
		}
		if own := rec.Truncate(time.Minute); own.After(last) {
			t.Errorf("%s: the record's minute %v is not listed (last %v)", c.name, own, last)
		}
	}
}

// TestUnitRetryWindowsAreTheAlerters: the retry windows the attempts
// follow are the alerter's defaults, so a chain calls an id rotated exactly
// when the alerter's retry-storm verdict would (lookup keeps its own copy
// so as not to import the alerter).
func TestUnitRetryWindowsAreTheAlerters(t *testing.T) {
	r := alerter.DefaultConfig().Retry
	want := retryWindows{Window: r.Window, MaxDelay: r.MaxDelay, RotationMargin: r.RotationMargin}
	if alerterRetry != want || alerterRetry.Window == 0 {
		t.Errorf("lookup's retry windows %+v; the alerter's %+v", alerterRetry, want)
	}
}
