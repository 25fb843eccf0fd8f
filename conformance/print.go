package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/errtrail/errtrail/parse"
)

// Line is the JSON line `errtrail check --json` prints for one input: the
// Result, or the reason the input could not be read.
type Line struct {
	File string `json:"file"`
	*Result
	Violations int    `json:"violations"`       // broken MUST rules
	Error      string `json:"error,omitempty"`  // the input could not be read
	Reason     string `json:"reason,omitempty"` // the decoder's reason (parse.ErrReason), or "io"
}

// LineOf builds the JSON line of one input.
func LineOf(file string, res *Result, err error) Line {
	if err != nil {
		l := Line{File: file, Error: err.Error(), Reason: "io"}
		var de *parse.DecodeError
		if errors.As(err, &de) {
			l.Reason = string(de.Reason)
		}
		return l
	}
	return Line{File: file, Result: res, Violations: res.Violations()}
}

// WriteJSON writes the line of one input as one line of JSON.
func WriteJSON(w io.Writer, file string, res *Result, err error) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(LineOf(file, res, err))
}

// WriteText writes what one input breaks, for people: what the reply was
// read as, then each rule with its level, sentence and fix.
func WriteText(w io.Writer, file string, res *Result, err error) error {
	var b strings.Builder
	switch {
	case err != nil:
		fmt.Fprintf(&b, "%s: cannot check: %s\n", file, oneLine(err.Error()))
	case res.NotAnError:
		fmt.Fprintf(&b, "%s: not an error reply (a success): nothing to check\n", file)
	default:
		fmt.Fprintf(&b, "%s: %s", file, res.Protocol)
		if res.Binding != "" {
			fmt.Fprintf(&b, " over %s", res.Binding)
		}
		fmt.Fprintf(&b, ", %s, kind %s", res.Envelope, res.Kind)
		if res.Code != "" {
			fmt.Fprintf(&b, ", code %s", oneLine(res.Code))
		}
		must := res.Violations()
		switch {
		case len(res.Broken) == 0:
			b.WriteString(": follows every rule errtrail checks\n")
		default:
			fmt.Fprintf(&b, ": %d violation(s) (MUST), %d advice (SHOULD)\n", must, len(res.Broken)-must)
		}
		for _, r := range res.Broken {
			word := "violation"
			if r.Level == string(parse.LevelShould) {
				word = "advice"
			}
			fmt.Fprintf(&b, "  %-6s %s (%s): %s\n", r.Level, r.Rule, word, r.Title)
			if r.Checks != "" {
				fmt.Fprintf(&b, "         rule:   %s\n", r.Checks)
			}
			if r.Change != "" {
				fmt.Fprintf(&b, "         change: %s\n", r.Change)
			}
		}
	}
	_, werr := io.WriteString(w, b.String())
	return werr
}

// oneLine keeps an input-derived text on one line of output.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
