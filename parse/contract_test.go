package parse

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestEventSchema checks docs/event.schema.json against the decoder: every
// event example under testdata/cases is valid under the schema and decodes,
// and events the decoder rejects for a contract reason are invalid under
// the schema too.
func TestEventSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(filepath.Join("..", "docs", "event.schema.json"))
	if err != nil {
		t.Fatalf("compile schema: %v", err)
	}
	validate := func(data []byte) error {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return err
		}
		return sch.Validate(v)
	}
	var events []string
	all, _ := filepath.Glob("testdata/cases/event-*.json")
	for _, p := range all {
		if !strings.HasSuffix(p, ".golden.json") {
			events = append(events, p)
		}
	}
	if len(events) == 0 {
		t.Fatal("no event examples")
	}
	for _, p := range events {
		data, _ := os.ReadFile(p)
		if err := validate(data); err != nil {
			t.Errorf("%s: not valid under the schema: %v", p, err)
		}
		d := NewDecoder(Options{})
		var rec Record
		if err := d.DecodeMessage(data, nil, 0, &rec); err != nil {
			t.Errorf("%s: valid under the schema but not decoded: %v", p, err)
		}
	}
	for _, bad := range []string{
		`{"observed_at":1,"protocol":"a2a"}`,
		`{"v":2,"observed_at":1,"reply":{}}`,
		`{"v":1,"observed_at":"1","reply":{}}`,
		`{"v":1,"observed_at":1}`,
		`{"v":1,"observed_at":1,"agent":7,"reply":{}}`,
		`{"v":1,"observed_at":1,"reply":{"http_status":"500"}}`,
		`{"v":1,"observed_at":1,"reply":{"grpc":{"status":17}}}`,
		`{"v":1,"observed_at":1,"reply":{"headers":"Retry-After: 1"}}`,
	} {
		if err := validate([]byte(bad)); err == nil {
			t.Errorf("schema accepts %s", bad)
		}
		d := NewDecoder(Options{})
		var rec Record
		if err := d.DecodeMessage([]byte(bad), nil, 0, &rec); err == nil {
			t.Errorf("decoder accepts %s", bad)
		}
	}
}
