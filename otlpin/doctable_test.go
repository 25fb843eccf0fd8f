package otlpin

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/errtrail/errtrail/lookup"
)

// TestOTelDocTable: docs/otel.md's table is DocTable's output (go test
// ./otlpin -run TestOTelDocTable -update rewrites it).
func TestOTelDocTable(t *testing.T) {
	const path = "../docs/otel.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, DocBegin), strings.Index(s, DocEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated table markers", path)
	}
	want, got := DocTable(), s[i+len(DocBegin):j]
	if *update {
		if got != want {
			os.WriteFile(path, []byte(s[:i+len(DocBegin)]+want+s[j:]), 0o644)
		}
		return
	}
	if got != want {
		t.Errorf("docs/otel.md's table differs from otlpin.Fields (go test ./otlpin -run TestOTelDocTable -update)\ngot:\n%s\nwant:\n%s", got, want)
	}
}

// TestFieldsCoverTheRecord: the declaration names every field of the
// stored record (lookup.Row's JSON keys, plus kafka_index), each once,
// and no cell breaks the Markdown table.
func TestFieldsCoverTheRecord(t *testing.T) {
	var declared []string
	for _, m := range Fields {
		for _, f := range strings.Split(m.Field, ", ") {
			if slices.Contains(declared, f) {
				t.Errorf("%s declared twice", f)
			}
			declared = append(declared, f)
		}
		if strings.ContainsAny(m.Note+m.Field, "|\n") {
			t.Errorf("%s: a cell holds | or a newline", m.Field)
		}
		if (m.From == FromAttr || m.From == FromResource) != (len(m.Attrs) > 0) && m.From != FromEvent {
			t.Errorf("%s: From %s with attributes %v", m.Field, m.From, m.Attrs)
		}
	}
	rt := reflect.TypeFor[lookup.Row]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if !slices.Contains(declared, name) {
			t.Errorf("record field %s is not declared in otlpin.Fields", name)
		}
	}
	if !slices.Contains(declared, "kafka_index") {
		t.Error("kafka_index is not declared")
	}
	// The attributes the issue names are all read.
	var keys []string
	for _, m := range append(Fields[:], Signals...) {
		keys = append(keys, m.Attrs...)
	}
	for _, k := range []string{"mcp.method.name", "error.type", "jsonrpc.request.id", "rpc.response.status_code", "gen_ai.tool.name",
		"mcp.protocol.version", "server.address", "a2a.method.name", "a2a.task.id", "a2a.task.state", "a2a.message.id",
		"gen_ai.agent.name", "http.response.status_code", "http.response.header.retry-after", "rpc.grpc.status_code",
		"service.name", "enduser.id"} {
		if !slices.Contains(keys, k) {
			t.Errorf("attribute %s is not declared", k)
		}
	}
}
