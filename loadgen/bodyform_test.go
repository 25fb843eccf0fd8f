package loadgen

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/errtrail/errtrail/parse"
)

// TestBodyForms: every body form produces events the decoder reads the same
// way, and body_json really embeds the JSON body.
func TestBodyForms(t *testing.T) {
	sc, err := Builtin("demo")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string][]string{}
	for _, form := range []string{BodyString, BodyJSON, BodyMixed} {
		var out bytes.Buffer
		cfg := Config{Scenario: sc, Speed: 0, MaxEvents: 400, Output: &out, BodyForm: form, KeepIDs: -1}
		if _, err := Run(t.Context(), cfg); err != nil {
			t.Fatalf("%s: %v", form, err)
		}
		d := parse.NewDecoder(parse.Options{})
		var rec parse.Record
		embedded := 0
		for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
			var ev struct {
				Reply struct {
					BodyJSON json.RawMessage `json:"body_json"`
				} `json:"reply"`
			}
			if err := d.DecodeMessage(line, nil, 0, &rec); err != nil {
				// Poison: one of them carries a deeply nested body_json on purpose.
				kinds[form] = append(kinds[form], "error:"+string(err.(*parse.DecodeError).Reason))
				continue
			}
			if json.Unmarshal(line, &ev) == nil && len(ev.Reply.BodyJSON) > 0 {
				embedded++
			}
			kinds[form] = append(kinds[form], string(rec.Kind))
		}
		switch {
		case form == BodyString && embedded != 0:
			t.Errorf("string form embedded %d bodies", embedded)
		case form != BodyString && embedded == 0:
			t.Errorf("%s form embedded no body", form)
		}
	}
	for _, form := range []string{BodyJSON, BodyMixed} {
		if len(kinds[form]) != len(kinds[BodyString]) {
			t.Fatalf("%s: %d events; string form %d", form, len(kinds[form]), len(kinds[BodyString]))
		}
		for i := range kinds[form] {
			if kinds[form][i] != kinds[BodyString][i] {
				t.Errorf("%s event %d decodes as %s; the string form as %s", form, i, kinds[form][i], kinds[BodyString][i])
			}
		}
	}
}
