package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Replies for the check command: a 429 without Retry-After breaks a MUST
// (seed 000); a bare 500 breaks only SHOULD rules; the seed's complete A2A
// throttle breaks nothing.
const (
	replyMust = "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n\r\n" +
		`{"jsonrpc":"2.0","id":"1","error":{"code":-32603,"message":"Rate limit exceeded","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"agents.example.com"},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}`
	replyClean = "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 12\r\n\r\n" +
		`{"jsonrpc":"2.0","id":"1","error":{"code":-32603,"message":"Rate limit exceeded","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"agents.example.com"},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}`
	replyShould = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n\r\n" +
		`{"jsonrpc":"2.0","id":"1","error":{"code":-32603,"message":"Internal error"}}`
)

func writeReplies(t *testing.T, replies map[string]string) string {
	dir := t.TempDir()
	for name, body := range replies {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCheckExitStatus: 1 when a MUST is broken, 0 when only SHOULD rules
// are (advice), 0 for a clean reply, 2 for unreadable input (winning over 1).
func TestCheckExitStatus(t *testing.T) {
	dir := writeReplies(t, map[string]string{"must.http": replyMust, "should.http": replyShould, "clean.http": replyClean, "bad.json": `{"v":1,`})
	p := func(n string) string { return filepath.Join(dir, n) }
	cases := []struct {
		files []string
		want  int
		out   []string // substrings the text output holds
		not   []string
	}{
		{[]string{p("must.http")}, 1, []string{"MUST   retry_after_header_missing (violation)", `Seed 000: "an HTTP 429 MUST include ` + "`Retry-After`" + `"`, "change: Send a Retry-After header"}, []string{"follows every rule"}},
		{[]string{p("should.http")}, 0, []string{"SHOULD untyped_5xx (advice)", "0 violation(s) (MUST)"}, []string{"MUST   "}},
		{[]string{p("clean.http")}, 0, []string{"follows every rule errtrail checks"}, []string{"MUST", "SHOULD"}},
		{[]string{p("clean.http"), p("must.http")}, 1, nil, nil},
		{[]string{p("must.http"), p("bad.json")}, 2, []string{"cannot check"}, nil},
		{[]string{p("missing.http")}, 2, []string{"cannot check"}, nil},
		{nil, 2, nil, nil},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		got := run(t.Context(), append([]string{"check"}, c.files...), &out, &errb)
		if got != c.want {
			t.Errorf("check %v = %d; want %d\n%s%s", c.files, got, c.want, out.String(), errb.String())
		}
		for _, s := range c.out {
			if !strings.Contains(out.String(), s) {
				t.Errorf("check %v: output lacks %q:\n%s", c.files, s, out.String())
			}
		}
		for _, s := range c.not {
			if strings.Contains(out.String(), s) {
				t.Errorf("check %v: output has %q:\n%s", c.files, s, out.String())
			}
		}
	}
}

// TestCheckJSON: --json prints one object per input, in input order, with
// the rules, their levels and the count of violations; flags may follow the
// files.
func TestCheckJSON(t *testing.T) {
	dir := writeReplies(t, map[string]string{"must.http": replyMust, "should.http": replyShould})
	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"check", filepath.Join(dir, "should.http"), filepath.Join(dir, "must.http"), "--json"}, &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d; stderr %s", code, errb.String())
	}
	type line struct {
		File       string `json:"file"`
		Violations int    `json:"violations"`
		Broken     []struct {
			Rule, Level, Seed, Checks, Change string
		} `json:"broken"`
	}
	var lines []line
	dec := json.NewDecoder(&out)
	for dec.More() {
		var l line
		if err := dec.Decode(&l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 2 || !strings.HasSuffix(lines[0].File, "should.http") || !strings.HasSuffix(lines[1].File, "must.http") {
		t.Fatalf("lines %+v", lines)
	}
	if lines[0].Violations != 0 || len(lines[0].Broken) == 0 || lines[0].Broken[0].Level != "SHOULD" {
		t.Errorf("should.http: %+v", lines[0])
	}
	found := false
	for _, b := range lines[1].Broken {
		if b.Rule == "retry_after_header_missing" && b.Level == "MUST" && b.Seed == "000" && b.Checks != "" && b.Change != "" {
			found = true
		}
	}
	if !found || lines[1].Violations == 0 {
		t.Errorf("must.http: %+v", lines[1])
	}
}

// TestCheckStdin: "-" reads the reply from stdin.
func TestCheckStdin(t *testing.T) {
	var out, errb bytes.Buffer
	code := runCheck([]string{"-"}, strings.NewReader(replyMust), &out, &errb)
	if code != 1 || !strings.Contains(out.String(), "-: a2a") || !strings.Contains(out.String(), "retry_after_header_missing") {
		t.Errorf("exit %d, output:\n%s%s", code, out.String(), errb.String())
	}
}
