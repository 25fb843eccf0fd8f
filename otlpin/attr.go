package otlpin

import (
	"strconv"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
)

// attrSet is the attributes of one span or log record and of its resource.
type attrSet struct {
	own, res []*commonpb.KeyValue
}

// find returns the value of key, the item's own attribute first.
func (a attrSet) find(key string) *commonpb.AnyValue {
	for _, kv := range a.own {
		if kv.GetKey() == key {
			return kv.GetValue()
		}
	}
	for _, kv := range a.res {
		if kv.GetKey() == key {
			return kv.GetValue()
		}
	}
	return nil
}

// has reports whether any attribute key starts with prefix.
func (a attrSet) hasPrefix(prefix string) bool {
	for _, kv := range a.own {
		if len(kv.GetKey()) >= len(prefix) && kv.GetKey()[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}

// str returns the first non-empty value of f's attributes as a string.
func (a attrSet) str(f Field) string {
	for _, k := range attrs(f) {
		if s := text(a.find(k)); s != "" {
			return s
		}
	}
	return ""
}

// strKey returns the value of one key as a string.
func (a attrSet) strKey(key string) string { return text(a.find(key)) }

// text renders a scalar value as a string; an array gives its first
// element (the http.*.header.* attributes are string arrays).
func text(v *commonpb.AnyValue) string {
	if v == nil {
		return ""
	}
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'f', -1, 64)
	case *commonpb.AnyValue_ArrayValue:
		if vs := x.ArrayValue.GetValues(); len(vs) > 0 {
			return text(vs[0])
		}
	}
	return ""
}

// strings lists a string or string-array value.
func textList(v *commonpb.AnyValue) []string {
	if v == nil {
		return nil
	}
	if arr, ok := v.GetValue().(*commonpb.AnyValue_ArrayValue); ok {
		var out []string
		for _, e := range arr.ArrayValue.GetValues() {
			if s := text(e); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	if s := text(v); s != "" {
		return []string{s}
	}
	return nil
}

// integer returns the value of f's first attribute that holds an integer
// (an int, or a string of decimal digits).
func (a attrSet) integer(keys ...string) (int64, string, bool) {
	for _, k := range keys {
		v := a.find(k)
		if v == nil {
			continue
		}
		if x, ok := v.GetValue().(*commonpb.AnyValue_IntValue); ok {
			return x.IntValue, k, true
		}
		if n, err := strconv.ParseInt(text(v), 10, 64); err == nil {
			return n, k, true
		}
	}
	return 0, "", false
}
