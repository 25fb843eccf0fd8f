package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// docURL is where the test pretends docs/openapi.yaml lives, so that the
// schemas' "#/components/..." references resolve inside it.
const docURL = "https://errtrail.invalid/openapi.json"

// openAPI is docs/openapi.yaml, decoded once, with a compiler holding it.
var openAPI struct {
	once     sync.Once
	err      error
	doc      map[string]any
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema // by location
}

func loadOpenAPI(t testing.TB) map[string]any {
	t.Helper()
	o := &openAPI
	o.once.Do(func() {
		raw, err := os.ReadFile(filepath.Join("..", "docs", "openapi.yaml"))
		if err != nil {
			o.err = err
			return
		}
		var y any
		if err := yaml.Unmarshal(raw, &y); err != nil {
			o.err = err
			return
		}
		// Through JSON: the schema library wants JSON's values (json.Number).
		j, err := json.Marshal(y)
		if err != nil {
			o.err = fmt.Errorf("the YAML is not JSON-compatible: %w", err)
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
		if err != nil {
			o.err = err
			return
		}
		o.compiler = jsonschema.NewCompiler()
		o.compiler.DefaultDraft(jsonschema.Draft2020)
		o.compiler.AssertFormat()
		if err := o.compiler.AddResource(docURL, doc); err != nil {
			o.err = err
			return
		}
		_ = json.Unmarshal(j, &o.doc)
		o.schemas = map[string]*jsonschema.Schema{}
	})
	if o.err != nil {
		t.Fatalf("docs/openapi.yaml: %v", o.err)
	}
	return o.doc
}

// schemaAt compiles the schema at a JSON pointer of the document.
func schemaAt(t testing.TB, pointer string) *jsonschema.Schema {
	t.Helper()
	loadOpenAPI(t)
	o := &openAPI
	o.mu.Lock()
	defer o.mu.Unlock()
	if s, ok := o.schemas[pointer]; ok {
		return s
	}
	s, err := o.compiler.Compile(docURL + "#" + pointer)
	if err != nil {
		t.Fatalf("compile %s: %v", pointer, err)
	}
	o.schemas[pointer] = s
	return s
}

// obj walks the decoded document: obj(doc, "paths", "/v1/errors") and so
// on; nil when absent.
func obj(v any, keys ...string) map[string]any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	m, _ := v.(map[string]any)
	return m
}

// deref follows a "$ref" to "#/..." inside the document.
func deref(t testing.TB, doc, v map[string]any) (map[string]any, string) {
	t.Helper()
	ref, ok := v["$ref"].(string)
	if !ok {
		return v, ""
	}
	if !strings.HasPrefix(ref, "#/") {
		t.Fatalf("reference %q leaves the document", ref)
	}
	keys := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
	for i, k := range keys {
		keys[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(k)
	}
	m := obj(doc, keys...)
	if m == nil {
		t.Fatalf("reference %q resolves to nothing", ref)
	}
	return m, strings.TrimPrefix(ref, "#")
}

func pointerEscape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// checkAnswer validates one answer of the api against the document: the
// route documents the status; a JSON answer's content type is documented
// for it and the body is valid under its schema.
func checkAnswer(t testing.TB, path string, status int, contentType string, body []byte) {
	t.Helper()
	doc := loadOpenAPI(t)
	rt, _ := match(path)
	if rt == nil {
		if status != http.StatusNotFound && status != http.StatusMethodNotAllowed && status != http.StatusRequestEntityTooLarge {
			t.Errorf("a path no route serves answered %d", status)
		}
		validateJSON(t, "/components/schemas/Problem", body)
		return
	}
	if !slices.Contains(rt.statuses, status) {
		t.Errorf("%s answered %d, which its route table row does not list", rt.pattern, status)
	}
	resp := obj(doc, "paths", rt.pattern, "get", "responses", strconv.Itoa(status))
	if resp == nil {
		t.Errorf("%s: docs/openapi.yaml documents no %d", rt.pattern, status)
		return
	}
	resp, loc := deref(t, doc, resp)
	if loc == "" {
		loc = "/paths/" + pointerEscape(rt.pattern) + "/get/responses/" + strconv.Itoa(status)
	}
	ct, _, _ := strings.Cut(contentType, ";")
	media := obj(resp, "content", ct)
	if media == nil {
		t.Errorf("%s %d: content type %q is not documented", rt.pattern, status, ct)
		return
	}
	if ct != "application/json" && ct != "application/problem+json" {
		return
	}
	sch := obj(media, "schema")
	if _, ok := sch["$ref"]; ok && len(sch) == 1 {
		_, target := deref(t, doc, sch)
		validateJSON(t, target, body)
		return
	}
	validateJSON(t, loc+"/content/"+pointerEscape(ct)+"/schema", body)
}

func validateJSON(t testing.TB, pointer string, body []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Errorf("answer is not JSON: %v", err)
		return
	}
	if err := schemaAt(t, pointer).Validate(v); err != nil {
		t.Errorf("answer not valid under %s: %v\n%s", pointer, err, body)
	}
}

// TestOpenAPIRoutes: the document and the route table name the same paths,
// methods, parameters (name and place) and statuses.
func TestOpenAPIRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	var served, documented []string
	for _, rt := range routes {
		served = append(served, rt.pattern)
	}
	for p := range obj(doc, "paths") {
		documented = append(documented, p)
	}
	sort.Strings(served)
	sort.Strings(documented)
	if !slices.Equal(served, documented) {
		t.Fatalf("paths: served %v; documented %v", served, documented)
	}
	for _, rt := range routes {
		item := obj(doc, "paths", rt.pattern)
		var methods []string
		for m := range item {
			methods = append(methods, m)
		}
		if !slices.Equal(methods, []string{"get"}) {
			t.Errorf("%s: documented operations %v; want [get] (HEAD is described in its text)", rt.pattern, methods)
		}
		var want, got []string
		for _, q := range rt.query {
			want = append(want, "query:"+q)
		}
		for _, p := range rt.pathParams() {
			want = append(want, "path:"+p)
		}
		params, _ := obj(doc, "paths", rt.pattern)["get"].(map[string]any)["parameters"].([]any)
		for _, p := range params {
			pm, _ := deref(t, doc, p.(map[string]any))
			got = append(got, fmt.Sprint(pm["in"], ":", pm["name"]))
			if pm["in"] == "path" && pm["required"] != true {
				t.Errorf("%s: path parameter %v is not required", rt.pattern, pm["name"])
			}
		}
		sort.Strings(want)
		sort.Strings(got)
		if !slices.Equal(want, got) {
			t.Errorf("%s: parameters: served %v; documented %v", rt.pattern, want, got)
		}
		var codes, docCodes []string
		for _, c := range rt.statuses {
			codes = append(codes, strconv.Itoa(c))
		}
		for c := range obj(doc, "paths", rt.pattern, "get", "responses") {
			docCodes = append(docCodes, c)
		}
		sort.Strings(codes)
		sort.Strings(docCodes)
		if !slices.Equal(codes, docCodes) {
			t.Errorf("%s: statuses: served %v; documented %v", rt.pattern, codes, docCodes)
		}
	}
}

// TestOpenAPIEnums: the document's closed lists are the code's.
func TestOpenAPIEnums(t *testing.T) {
	doc := loadOpenAPI(t)
	enum := func(keys ...string) []string {
		var out []string
		list, _ := obj(doc, keys...)["enum"].([]any)
		for _, v := range list {
			out = append(out, fmt.Sprint(v))
		}
		sort.Strings(out)
		return out
	}
	var codes []string
	for _, k := range problemKindsForDoc {
		codes = append(codes, k.code)
	}
	var ks []string
	for _, k := range kinds {
		ks = append(ks, string(k))
	}
	params := map[string]bool{}
	for _, rt := range routes {
		for _, q := range rt.query {
			params[q] = true
		}
		for _, p := range rt.pathParams() {
			params[p] = p != "id" // a bad id is bad-id, never a named parameter
		}
	}
	var names []string
	for p, ok := range params {
		if ok {
			names = append(names, p)
		}
	}
	for _, c := range []struct {
		what      string
		code, doc []string
	}{
		{"Problem.code", codes, enum("components", "schemas", "Problem", "properties", "code")},
		{"Kind", ks, enum("components", "schemas", "Kind")},
		{"Problem.parameter", names, enum("components", "schemas", "Problem", "properties", "parameter")},
	} {
		sort.Strings(c.code)
		if !slices.Equal(c.code, c.doc) {
			t.Errorf("%s: code has %v; document has %v", c.what, c.code, c.doc)
		}
	}
}

// TestOpenAPIStructs walks the Go types the api encodes, field by field
// through their json tags, and checks the schema of each: the same
// properties, a field without omitempty is required, a pointer, slice or
// map may be null (Go encodes nil so), nested structs have schemas of their
// own that are checked the same way. A field added to lookup.Story (or the
// report, the page, the problem) without the document fails here.
func TestOpenAPIStructs(t *testing.T) {
	doc := loadOpenAPI(t)
	for _, c := range []struct {
		schema string
		v      any
	}{
		{"Story", lookup.Story{}},
		{"Page", lookup.Page{}},
		{"Report", report.Report{}},
		{"Problem", problem{}},
		{"IncidentList", IncidentList{}},
	} {
		seen := map[reflect.Type]bool{}
		walkSchema(t, doc, c.schema, obj(doc, "components", "schemas", c.schema), reflect.TypeOf(c.v), seen)
	}
}

var timeType = reflect.TypeOf(time.Time{})

// neverNull are the nil-able fields the api itself turns into [] before it
// encodes them (serveList), so their schemas may refuse null.
var neverNull = map[string]bool{"Page.errors": true, "IncidentList.incidents": true}

func walkSchema(t *testing.T, doc map[string]any, where string, sch map[string]any, typ reflect.Type, seen map[reflect.Type]bool) {
	t.Helper()
	if sch == nil {
		t.Errorf("%s: no schema for %v", where, typ)
		return
	}
	sch, _ = deref(t, doc, sch)
	if all, ok := sch["allOf"].([]any); ok && len(all) > 0 {
		sch, _ = deref(t, doc, all[0].(map[string]any))
	}
	types := schemaTypes(sch)
	nullable := false
	for typ.Kind() == reflect.Pointer {
		typ, nullable = typ.Elem(), true
	}
	if typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
		nullable = true
	}
	if nullable && len(types) > 0 && !slices.Contains(types, "null") && !omitted(where) && !neverNull[where] {
		t.Errorf("%s: Go encodes nil as null; the schema's type %v does not allow it", where, types)
	}
	switch {
	case typ == timeType:
		if sch["format"] != "date-time" {
			t.Errorf("%s: a time; want format date-time", where)
		}
	case typ.Kind() == reflect.Struct:
		if seen[typ] {
			return
		}
		seen[typ] = true
		if sch["additionalProperties"] != false {
			t.Errorf("%s: object schema without additionalProperties: false", where)
		}
		props := obj(sch, "properties")
		var required []string
		for _, r := range sch["required"].([]any) {
			required = append(required, r.(string))
		}
		var goNames []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			goNames = append(goNames, name)
			omit := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
			if !omit && !slices.Contains(required, name) {
				t.Errorf("%s.%s: always encoded; the schema does not require it", where, name)
			}
			if omit && slices.Contains(required, name) {
				t.Errorf("%s.%s: omitempty; the schema requires it", where, name)
			}
			p, _ := props[name].(map[string]any)
			sub := where + "." + name
			if omit {
				sub += "?"
			}
			walkSchema(t, doc, sub, p, f.Type, seen)
		}
		var docNames []string
		for n := range props {
			docNames = append(docNames, n)
		}
		sort.Strings(goNames)
		sort.Strings(docNames)
		if !slices.Equal(goNames, docNames) {
			t.Errorf("%s: fields %v; schema properties %v", where, goNames, docNames)
		}
	case typ.Kind() == reflect.Slice:
		if !slices.Contains(types, "array") {
			t.Errorf("%s: a slice; schema type %v", where, types)
		}
		items, _ := sch["items"].(map[string]any)
		walkSchema(t, doc, where+"[]", items, typ.Elem(), seen)
	case typ.Kind() == reflect.Map:
		if !slices.Contains(types, "object") {
			t.Errorf("%s: a map; schema type %v", where, types)
		}
		add, _ := sch["additionalProperties"].(map[string]any)
		walkSchema(t, doc, where+"{}", add, typ.Elem(), seen)
	default:
		want := map[reflect.Kind]string{reflect.String: "string", reflect.Bool: "boolean",
			reflect.Int: "integer", reflect.Int32: "integer", reflect.Int64: "integer", reflect.Uint32: "integer", reflect.Uint64: "integer", reflect.Float64: "number"}[typ.Kind()]
		if want == "" {
			t.Errorf("%s: Go kind %v has no rule here", where, typ.Kind())
		} else if len(types) > 0 && !slices.Contains(types, want) {
			t.Errorf("%s: a %v; schema type %v", where, typ.Kind(), types)
		}
		if len(types) == 0 && sch["enum"] == nil {
			t.Errorf("%s: schema without a type", where)
		}
	}
}

// omitted: an omitempty field is never encoded as null, so its
// schema need not allow null.
func omitted(where string) bool { return strings.HasSuffix(where, "?") }

func schemaTypes(sch map[string]any) []string {
	switch v := sch["type"].(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	if sch["enum"] != nil { // a string enum
		return []string{"string"}
	}
	return nil
}
