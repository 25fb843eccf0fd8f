package conformance

import (
	"errors"

	"github.com/errtrail/errtrail/parse"
)

// Broken is one rule a reply breaks.
type Broken struct {
	Rule   string `json:"rule"`           // the finding id (parse.Finding)
	Level  string `json:"level"`          // "MUST" (a violation) or "SHOULD" (advice)
	Seed   string `json:"seed,omitempty"` // "000", "002", "003", "004"; "" when the rule is not from a seed
	Title  string `json:"title"`
	Checks string `json:"checks"` // the sentence, quoted, with its source
	Change string `json:"change"` // what to change
}

// Result is what one reply was read as and the rules it breaks, in the
// order the decoder raised them.
type Result struct {
	Protocol   string   `json:"protocol"`
	Binding    string   `json:"binding,omitempty"`
	Envelope   string   `json:"envelope"`
	Kind       string   `json:"kind"`
	Code       string   `json:"code,omitempty"`
	NotAnError bool     `json:"not_an_error,omitempty"` // a success reply: nothing to check
	Broken     []Broken `json:"broken"`
}

// Violations counts the broken MUST rules.
func (r *Result) Violations() int {
	n := 0
	for _, b := range r.Broken {
		if b.Level == string(parse.LevelMust) {
			n++
		}
	}
	return n
}

// Checker checks replies. It is not safe for concurrent use; give each
// goroutine its own.
type Checker struct {
	d   *parse.Decoder
	rec parse.Record
}

// NewChecker returns a Checker with the decoder's default limits.
func NewChecker() *Checker {
	return &Checker{d: parse.NewDecoder(parse.Options{KeepRaw: -1})}
}

// Check decodes one reply and lists the rules it breaks. err is a
// *parse.DecodeError when the reply cannot be read.
func (c *Checker) Check(reply []byte) (Result, error) {
	rec := &c.rec
	err := c.d.DecodeMessage(reply, nil, 0, rec)
	var de *parse.DecodeError
	if errors.As(err, &de) && de.Reason == parse.ErrNotAnError {
		return Result{Protocol: string(parse.ProtocolUnknown), Envelope: string(parse.EnvNone), Kind: string(parse.KindUnknown),
			NotAnError: true, Broken: []Broken{}}, nil
	}
	if err != nil {
		return Result{}, err
	}
	res := Result{
		Protocol: string(rec.Protocol), Binding: string(rec.Binding), Envelope: string(rec.Envelope),
		Kind: string(rec.Kind), Code: string([]byte(rec.Code)), Broken: make([]Broken, 0, len(rec.Findings)),
	}
	for _, f := range rec.Findings {
		res.Broken = append(res.Broken, brokenOf(f))
	}
	return res, nil
}

func brokenOf(f parse.Finding) Broken {
	r, ok := parse.RuleOf(f)
	if !ok { // cannot happen within one build; kept so that output never loses a finding
		return Broken{Rule: string(f), Level: string(parse.LevelMust), Title: string(f)}
	}
	return Broken{Rule: string(r.Name), Level: string(r.Level), Seed: r.Seed, Title: r.Title, Checks: r.Checks(), Change: r.Change}
}
