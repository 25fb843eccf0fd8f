package conformance

import (
	"errors"
	"testing"

	"github.com/errtrail/errtrail/parse"
)

// TestCheckUnreadable: input the decoder cannot read is its *DecodeError,
// with the dead-letter reason; nothing is reported as checked.
func TestCheckUnreadable(t *testing.T) {
	_, err := NewChecker().Check([]byte("HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n\r\n{\"jsonrpc\":"))
	var de *parse.DecodeError
	if !errors.As(err, &de) || de.Reason != parse.ErrInvalidJSON {
		t.Fatalf("err = %v; want invalid_json", err)
	}
}

// TestCheckNotAnError: a success reply is no error reply: nothing to check,
// no rule broken, no error.
func TestCheckNotAnError(t *testing.T) {
	res, err := NewChecker().Check([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"kind\":\"task\"}}"))
	if err != nil || !res.NotAnError || len(res.Broken) != 0 || res.Violations() != 0 {
		t.Fatalf("res %+v, err %v", res, err)
	}
}

// TestCheckLevels: each broken rule carries its row's level and sentence;
// Violations counts only the MUST ones.
func TestCheckLevels(t *testing.T) {
	// A bare 500 without a body: body_missing (MUST) and untyped_5xx (SHOULD).
	res, err := NewChecker().Check([]byte("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	levels := map[string]string{}
	for _, b := range res.Broken {
		r, _ := parse.RuleOf(parse.Finding(b.Rule))
		if r == nil || b.Checks != r.Checks() || b.Change != r.Change || b.Seed != r.Seed || b.Level != string(r.Level) {
			t.Errorf("broken %+v differs from its rule", b)
		}
		levels[b.Rule] = b.Level
	}
	if levels["body_missing"] != "MUST" || levels["untyped_5xx"] != "SHOULD" || res.Violations() != 1 {
		t.Errorf("broken %+v, violations %d", res.Broken, res.Violations())
	}
}
