package emit

import (
	"strings"
	"testing"

	"github.com/errtrail/errtrail/parse"
)

// validCases are bodies the decoder accepts (want true) and refuses: emit
// embeds the first as body_json and sends the others as text.
var validCases = []struct {
	body string
	want bool
}{
	{`{"a":1}`, true},
	{` {"a" : [ true , false , null ] } `, true},
	{`{"a":"\ud83d\ude00","b":"\u00e9"}`, true},
	{`{"a":"\ud800"}`, true}, // a lone surrogate escape: both accept it
	{`{"a":-0.0E+1}`, true},
	{strings.Repeat("[", 60) + strings.Repeat("]", 60), true},
	{strings.Repeat("[", 61) + strings.Repeat("]", 61), false}, // deeper than maxBodyJSONDepth
	{`[1,2`, false},
	{`{"a":1}{}`, false}, // two values
	{`[01]`, false},
	{"{\"a\":\"\xff\"}", false}, // not UTF-8
	{`{"a":'x'}`, false},
	{`{"a":1,}`, false},
}

// TestValidJSONAgreesWithDecoder: emit's check (the standard library's
// grammar, UTF-8, depth) gives the decoder's verdict (parse.ValidJSON) on
// each case, and each case's expected one: a body_json the decoder refuses
// would make the whole event undecodable.
func TestValidJSONAgreesWithDecoder(t *testing.T) {
	for _, c := range validCases {
		got, dec := validJSON([]byte(c.body), maxBodyJSONDepth), parse.ValidJSON([]byte(c.body), maxBodyJSONDepth)
		if got != c.want || dec != c.want {
			t.Errorf("%.40q: emit %v, decoder %v; want %v", c.body, got, dec, c.want)
		}
	}
}

// FuzzValidJSON: on any body that starts like JSON, emit's check and the
// decoder's give the same verdict, at a small depth bound and at emit's.
func FuzzValidJSON(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c.body))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if c := firstNonSpace(b); c != '{' && c != '[' {
			return
		}
		for _, d := range []int{3, maxBodyJSONDepth} {
			if got, want := validJSON(b, d), parse.ValidJSON(b, d); got != want {
				t.Fatalf("validJSON(%q, %d) = %v; the decoder says %v", b, d, got, want)
			}
		}
	})
}
