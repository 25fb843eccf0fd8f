package loadgen

import (
	"bytes"
	"context"
	"testing"

	"github.com/errtrail/errtrail/parse"
)

// TestDecoderAgrees feeds the demo's messages to the real decoder: every
// valid event must decode to the kind the scenario simulated (untyped bare
// 500s as internal or unknown, without a typed reason), and every poison
// message must fail, so rows(errors) + rows(dead_letter) == produced holds
// per kind, not only in total.
func TestDecoderAgrees(t *testing.T) {
	sc, _ := Builtin("demo")
	var buf bytes.Buffer
	r, err := Run(context.Background(), Config{Scenario: sc, Output: &buf, KeepIDs: -1})
	if err != nil {
		t.Fatal(err)
	}
	d := parse.NewDecoder(parse.Options{})
	got := map[string]int64{}
	var failed int64
	for _, l := range bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n")) {
		var rec parse.Record
		if err := d.DecodeMessage(l, nil, 0, &rec); err != nil {
			failed++
			continue
		}
		k := string(rec.Kind)
		if rec.Kind == parse.KindInternal || rec.Kind == parse.KindUnknown {
			if rec.Typed {
				t.Errorf("bare 500 decoded as typed %s", k)
			}
			k = string(KindUntyped)
		}
		if rec.SourceKind != "agent" {
			k = rec.SourceKind + "/" + k
		}
		got[k]++
	}
	want := r.ByKind()
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: decoded %d; produced %d (all decoded %v)", k, got[k], n, got)
		}
	}
	if failed != r.Poison {
		t.Errorf("%d messages failed to decode; %d poison produced", failed, r.Poison)
	}
}
