package parse

// TestCorpusExpected holds the `expected` column of every
// testdata/corpus/<sdk>/cases.tsv against what the decoder makes of the
// captured reply (decoded as TestGolden decodes it). The column is free text
// written at capture time; this file reads the claims it makes in the small
// grammar below and checks each against the record.
//
// Grammar of `expected`:
//
//   - A text starting with "-" is a control, not an error. Its note must say
//     which control: "not an error" or "grpc-status 0" means the decoder
//     refuses the reply with not_an_error; otherwise "failed" (any case, as
//     in "task FAILED in result", "SSE, final status failed") means a record
//     with the task_failed envelope. A "-" text saying neither is unreadable.
//   - Any other text claims an error: the decoder returns a record. The text
//     is split at " or " and " / " outside parentheses into alternatives; the
//     text holds when at least one alternative holds, and an alternative
//     holds when every claim in it holds. Claims:
//     -NNNNN                     JSON-RPC code: rec.JSONRPCCode (HasJSONRPC)
//     NNN, "HTTP NNN"            HTTP status (100..599): rec.HTTPStatus
//     NOT_FOUND, INTERNAL, ...   a google.rpc.Code name: rec.GRPCStatusName()
//     TaskNotFoundError, InvalidParams, ...
//     an A2A error name (with or without the "Error" suffix, as
//     the desc of a row of a2aErrors), the v0.3 name
//     AuthenticatedExtendedCardNotConfiguredError, a2a-go's
//     Unauthenticated / Unauthorized, or the MCP names
//     HeaderMismatch / UnsupportedProtocolVersion: rec.Code is
//     the row's reason (or a variant). For the five standard
//     JSON-RPC errors an empty rec.Code with the row's JSON-RPC
//     number also holds: the decoder names a standard code only
//     once the reply is known to be A2A.
//     AAP CODE, aap.error CODE   rec.Protocol is aap and rec.Code is CODE
//     "tool result isError:true" the mcp_tool_result envelope
//     "protocol error"           the jsonrpc_error envelope
//     "parse error"              the same as JSONParseError
//     "resource not found"       JSON-RPC -32002 or -32602 (MCP changed the code)
//     "extended card not configured"  the same as ExtendedAgentCardNotConfiguredError
//     "authentication failure"   rec.Kind is auth
//     "in SSE"                   the captured reply is text/event-stream
//     "retry hints", "RetryInfo" a retry delay was decoded (rec.RetryAfterMS >= 0)
//     A word of two or more claims joined by "/" (INTERNAL/UNKNOWN, 415/400,
//     InvalidRequest/InvalidParams) is one claim that holds when any part
//     does. In a parenthesised group only JSON-RPC codes are read, as one
//     claim that holds when any of them does ("(-32002 up to 2025-11-25,
//     -32602 from 2026-07-28)"); the rest of a group is a note. Every other
//     word is a note. An alternative without any claim makes the whole text
//     unreadable.
//
// A row whose text does not hold, or cannot be read, fails the test unless
// its `accepted` column (the seventh) says why the difference is accepted:
// real SDK behaviour, or an expectation that was imprecise at capture time.
// A difference that looks like a decoder bug rather than SDK behaviour is
// marked with a reason starting "SUSPECTED DECODER BUG" and logged apart, so
// that it stays visible until the decoder is fixed (then the reason goes
// stale and must be removed).
// A row whose text holds must have an empty `accepted`, so that a reason
// goes away once it no longer applies. The capture programs carry the column
// over when they rewrite cases.tsv (testdata/capture/README.md).

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// caseOutcome is what the decoder made of one captured reply.
type caseOutcome struct {
	rec     *Record   // nil when the decoder refused the reply
	refused ErrReason // the refusal's reason, "" when rec is set
	sse     bool      // the captured reply is an event stream
}

func (o *caseOutcome) String() string {
	if o.rec == nil {
		return "refused: " + string(o.refused)
	}
	r := o.rec
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s/%s http=%d", r.Protocol, r.Binding, r.Envelope, r.HTTPStatus)
	if n := r.GRPCStatusName(); n != "" {
		fmt.Fprintf(&b, " grpc=%s", n)
	}
	if r.HasJSONRPC {
		fmt.Fprintf(&b, " jsonrpc=%d", r.JSONRPCCode)
	}
	fmt.Fprintf(&b, " code=%q kind=%s retry_after_ms=%d", r.Code, r.Kind, r.RetryAfterMS)
	if o.sse {
		b.WriteString(" sse")
	}
	return b.String()
}

// expClaim is one claim of an expected text.
type expClaim struct {
	desc string
	ok   func(o *caseOutcome) bool
}

// expName is what an error name in the text claims about rec.Code.
type expName struct {
	codes    []string // any of these
	jsonrpc  int
	standard bool // one of the five standard JSON-RPC errors
}

var expStandardCodes = map[int]bool{-32700: true, -32600: true, -32601: true, -32602: true, -32603: true}

// expNames maps the error names the texts use to the decoder's own tables.
var expNames = func() map[string]expName {
	m := make(map[string]expName)
	ident := regexp.MustCompile(`^[A-Za-z]+Error$`)
	fromRow := func(e *a2aError) expName {
		return expName{append([]string{e.reason}, e.variants...), e.jsonrpc, expStandardCodes[e.jsonrpc]}
	}
	for i := range a2aErrors {
		e := &a2aErrors[i]
		if ident.MatchString(e.desc) {
			m[e.desc] = fromRow(e)
			m[strings.TrimSuffix(e.desc, "Error")] = fromRow(e)
		}
	}
	m["AuthenticatedExtendedCardNotConfiguredError"] = fromRow(a2aByReason["EXTENDED_AGENT_CARD_NOT_CONFIGURED"]) // the v0.3 name
	m["Unauthenticated"] = fromRow(a2aByReason["UNAUTHENTICATED"])                                                // a2a-go
	m["Unauthorized"] = fromRow(a2aByReason["UNAUTHORIZED"])
	m["HeaderMismatch"] = expName{[]string{mcpCodes[-32020].code}, -32020, false}
	m["UnsupportedProtocolVersion"] = expName{[]string{mcpCodes[-32022].code}, -32022, false}
	return m
}()

func nameClaim(word string, n expName) expClaim {
	return expClaim{word, func(o *caseOutcome) bool {
		r := o.rec
		for _, c := range n.codes {
			if r.Code == c {
				return true
			}
		}
		return n.standard && r.Code == "" && r.HasJSONRPC && r.JSONRPCCode == n.jsonrpc
	}}
}

func jsonrpcClaim(codes ...int) expClaim {
	var d []string
	for _, c := range codes {
		d = append(d, strconv.Itoa(c))
	}
	return expClaim{"jsonrpc " + strings.Join(d, "|"), func(o *caseOutcome) bool {
		for _, c := range codes {
			if o.rec.HasJSONRPC && o.rec.JSONRPCCode == c {
				return true
			}
		}
		return false
	}}
}

var (
	expJSONRPCWord = regexp.MustCompile(`^-3\d{4}$`)
	expJSONRPCAny  = regexp.MustCompile(`(?:^|[^\w-])(-3\d{4})\b`)
	expHTTPWord    = regexp.MustCompile(`^[1-5]\d\d$`)
	expParen       = regexp.MustCompile(`\([^()]*\)`)
	expAAP         = regexp.MustCompile(`\b(?:AAP|aap\.error) ([A-Z_]+)`)
)

// expPhrases are the claims written as phrases, matched case-insensitively
// before the text is split into words.
var expPhrases = []struct {
	re *regexp.Regexp
	c  expClaim
}{
	{regexp.MustCompile(`(?i)tool result isError:\s*true`), expClaim{"mcp_tool_result", func(o *caseOutcome) bool { return o.rec.Envelope == EnvMCPToolResult }}},
	{regexp.MustCompile(`(?i)protocol error`), expClaim{"jsonrpc_error", func(o *caseOutcome) bool { return o.rec.Envelope == EnvJSONRPCError }}},
	{regexp.MustCompile(`(?i)parse error`), nameClaim("parse error", expNames["JSONParseError"])},
	{regexp.MustCompile(`(?i)resource not found`), jsonrpcClaim(-32002, -32602)},
	{regexp.MustCompile(`(?i)extended ?card not configured`), nameClaim("extended card not configured", expNames["ExtendedAgentCardNotConfiguredError"])},
	{regexp.MustCompile(`(?i)authentication failure`), expClaim{"kind auth", func(o *caseOutcome) bool { return o.rec.Kind == KindAuth }}},
	{regexp.MustCompile(`(?i)\bin SSE\b`), expClaim{"sse", func(o *caseOutcome) bool { return o.sse }}},
	{regexp.MustCompile(`(?i)retry hints|\bRetryInfo\b`), expClaim{"retry delay", func(o *caseOutcome) bool { return o.rec.RetryAfterMS >= 0 }}},
}

// wordClaim reads one word as a claim, or reports false for a note.
func wordClaim(w string) (expClaim, bool) {
	switch {
	case expJSONRPCWord.MatchString(w):
		n, _ := strconv.Atoi(w)
		return jsonrpcClaim(n), true
	case expHTTPWord.MatchString(w):
		n, _ := strconv.Atoi(w)
		return expClaim{"http " + w, func(o *caseOutcome) bool { return o.rec.HTTPStatus == n }}, true
	case grpcCodeByName([]byte(w)) >= 0:
		return expClaim{"grpc " + w, func(o *caseOutcome) bool { return o.rec.GRPCStatusName() == w }}, true
	}
	if n, ok := expNames[w]; ok {
		return nameClaim(w, n), true
	}
	if strings.Contains(w, "/") {
		var parts []expClaim
		for _, p := range strings.Split(w, "/") {
			c, ok := wordClaim(p)
			if !ok {
				return expClaim{}, false // e.g. net/http: a note
			}
			parts = append(parts, c)
		}
		return expClaim{w, func(o *caseOutcome) bool {
			for _, c := range parts {
				if c.ok(o) {
					return true
				}
			}
			return false
		}}, true
	}
	return expClaim{}, false
}

// splitTop splits s at each sep that is outside parentheses.
func splitTop(s string, seps ...string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
			continue
		case ')':
			depth--
			continue
		}
		if depth > 0 {
			continue
		}
		for _, sep := range seps {
			if strings.HasPrefix(s[i:], sep) {
				out = append(out, s[start:i])
				start = i + len(sep)
				i = start - 1
				break
			}
		}
	}
	return append(out, s[start:])
}

var (
	claimRecord  = expClaim{"a record", func(o *caseOutcome) bool { return o.rec != nil }}
	claimRefused = expClaim{"refused not_an_error", func(o *caseOutcome) bool { return o.rec == nil && o.refused == ErrNotAnError }}
	claimFailed  = expClaim{"task_failed", func(o *caseOutcome) bool { return o.rec != nil && o.rec.Envelope == EnvTaskFailed }}
)

// parseExpected reads an expected text into alternatives of claims.
func parseExpected(text string) ([][]expClaim, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, errors.New("empty")
	}
	if strings.HasPrefix(text, "-") && !expJSONRPCWord.MatchString(strings.Fields(text)[0]) {
		l := strings.ToLower(text)
		switch {
		case strings.Contains(l, "not an error"), strings.Contains(l, "grpc-status 0"):
			return [][]expClaim{{claimRefused}}, nil
		case strings.Contains(l, "failed"):
			return [][]expClaim{{claimFailed}}, nil
		}
		return nil, errors.New(`a "-" control that says neither "not an error", "grpc-status 0" nor "failed"`)
	}
	var alts [][]expClaim
	for _, alt := range splitTop(text, " or ", " / ") {
		claims := []expClaim{claimRecord}
		own := 0
		alt = expParen.ReplaceAllStringFunc(alt, func(g string) string {
			var codes []int
			for _, m := range expJSONRPCAny.FindAllStringSubmatch(g, -1) {
				n, _ := strconv.Atoi(m[1])
				codes = append(codes, n)
			}
			if len(codes) > 0 {
				claims = append(claims, jsonrpcClaim(codes...))
				own++
			}
			return " "
		})
		alt = expAAP.ReplaceAllStringFunc(alt, func(m string) string {
			code := expAAP.FindStringSubmatch(m)[1]
			claims = append(claims, expClaim{"aap " + code, func(o *caseOutcome) bool {
				return o.rec.Protocol == ProtocolAAP && o.rec.Code == code
			}})
			own++
			return " "
		})
		for _, p := range expPhrases {
			alt = p.re.ReplaceAllStringFunc(alt, func(string) string {
				claims = append(claims, p.c)
				own++
				return " "
			})
		}
		for _, w := range strings.Fields(alt) {
			if c, ok := wordClaim(strings.Trim(w, ",;:+")); ok {
				claims = append(claims, c)
				own++
			}
		}
		if own == 0 {
			return nil, fmt.Errorf("alternative %q makes no claim", strings.TrimSpace(alt))
		}
		alts = append(alts, claims)
	}
	return alts, nil
}

// checkExpected returns "" when the text holds for o, else why not.
func checkExpected(text string, o *caseOutcome) string {
	alts, err := parseExpected(text)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	var failed []string
	for _, claims := range alts {
		var bad []string
		for _, c := range claims {
			// Only the refusal claim is about a refused reply; every
			// other claim needs a record.
			if (o.rec == nil && c.desc != claimRefused.desc) || !c.ok(o) {
				bad = append(bad, c.desc)
			}
		}
		if len(bad) == 0 {
			return ""
		}
		failed = append(failed, strings.Join(bad, ", "))
	}
	return "does not hold: " + strings.Join(failed, " | ")
}

// isEventStream reports whether a captured HTTP reply is text/event-stream.
func isEventStream(data []byte) bool {
	head := data
	if i := bytes.Index(data, []byte("\r\n\r\n")); i >= 0 {
		head = data[:i]
	}
	for _, line := range strings.Split(string(head), "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "content-type") &&
			strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "text/event-stream") {
			return true
		}
	}
	return false
}

var casesHeader = []string{"sdk", "version", "binding", "file", "provoked", "expected", "accepted"}

// readCases reads one cases.tsv: tab-separated rows of seven columns (a
// trailing empty `accepted` may be left off), no quoting.
func readCases(t *testing.T, path string) [][]string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if lines[0] != strings.Join(casesHeader, "\t") {
		t.Fatalf("%s: header %q, want %q", path, lines[0], strings.Join(casesHeader, "\t"))
	}
	var rows [][]string
	for i, line := range lines[1:] {
		row := strings.Split(strings.TrimSuffix(line, "\r"), "\t")
		switch len(row) {
		case 6:
			row = append(row, "")
		case 7:
		default:
			t.Fatalf("%s:%d: %d columns, want 7", path, i+2, len(row))
		}
		rows = append(rows, row)
	}
	return rows
}

func TestCorpusExpected(t *testing.T) {
	tsvs, _ := filepath.Glob("testdata/corpus/*/cases.tsv")
	if len(tsvs) == 0 {
		t.Fatal("no testdata/corpus/*/cases.tsv")
	}
	d := NewDecoder(Options{})
	var matched, accepted int
	var bugs []string
	byReason := map[string]int{}
	for _, tsv := range tsvs {
		dir := filepath.Dir(tsv)
		for _, row := range readCases(t, tsv) {
			file, expected, reason := row[3], row[5], strings.TrimSpace(row[6])
			in := filepath.Join(dir, file)
			data, err := os.ReadFile(in)
			if err != nil {
				t.Errorf("%s: %v", in, err)
				continue
			}
			var rec Record
			o := caseOutcome{sse: strings.HasSuffix(file, ".http") && isEventStream(data)}
			if err := d.DecodeMessage(data, contextOf(in), 1764489600000, &rec); err != nil {
				var de *DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("%s: %v", in, err)
				}
				o.refused = de.Reason
			} else {
				o.rec = rec.Clone()
			}
			why := checkExpected(expected, &o)
			switch {
			case why == "" && reason != "":
				t.Errorf("%s: expected %q now holds (%s): remove the stale accepted reason %q", in, expected, &o, reason)
			case why == "":
				matched++
			case reason == "":
				t.Errorf("%s: expected %q %s\n\tgot %s\n\t(a decoder bug, or write why the difference is accepted in the seventh column of %s)", in, expected, why, &o, tsv)
			default:
				accepted++
				byReason[reason]++
				if strings.HasPrefix(reason, "SUSPECTED DECODER BUG") {
					bugs = append(bugs, fmt.Sprintf("%s: expected %q, got %s", in, expected, &o))
				}
			}
		}
	}
	t.Logf("%d rows hold, %d differ with an accepted reason", matched, accepted)
	for _, b := range bugs {
		t.Logf("SUSPECTED DECODER BUG %s", b)
	}
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if byReason[reasons[i]] != byReason[reasons[j]] {
			return byReason[reasons[i]] > byReason[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	for _, r := range reasons {
		t.Logf("%4d  %s", byReason[r], r)
	}
}
