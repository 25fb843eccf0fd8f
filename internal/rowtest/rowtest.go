// Package rowtest helps the tests that hold a consumer of the error row to
// schema.RowColumns: it sets one field of a row struct, found by its
// column name (tag "ch") or JSON key (tag "json"), to one of two distinct
// values, so a test can see whether that field reaches the consumer's
// output. For tests only.
package rowtest

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/errtrail/errtrail/schema"
)

// Set sets the fields of *ptr whose tag (tag "ch" or "json", the name before
// any comma) is key to value variant 1 or 2, which differ from each other
// and from the zero value, and reports whether any field has that key.
func Set(ptr any, tag, key string, variant int) bool {
	v := reflect.ValueOf(ptr).Elem()
	found := false
	for i := 0; i < v.NumField(); i++ {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get(tag), ",")
		if name == key && name != "" {
			setValue(v.Field(i), variant)
			found = true
		}
	}
	return found
}

// Fill sets every tagged field of *ptr to value variant.
func Fill(ptr any, tag string, variant int) {
	v := reflect.ValueOf(ptr).Elem()
	for i := 0; i < v.NumField(); i++ {
		if name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get(tag), ","); name != "" {
			setValue(v.Field(i), variant)
		}
	}
}

// Keys returns the tag names of *ptr's fields, in field order.
func Keys(ptr any, tag string) []string {
	t := reflect.TypeOf(ptr).Elem()
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get(tag), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

var timeType = reflect.TypeFor[time.Time]()

func setValue(f reflect.Value, variant int) {
	switch {
	case f.Type() == timeType:
		f.Set(reflect.ValueOf(time.UnixMilli(int64(1_700_000_000_000 + variant)).UTC()))
		return
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(fmt.Sprintf("v%d", variant))
	case reflect.Bool:
		f.SetBool(variant == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.SetInt(int64(variant))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f.SetUint(uint64(variant))
	case reflect.Pointer:
		p := reflect.New(f.Type().Elem())
		setValue(p.Elem(), variant)
		f.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(f.Type(), 1, 1)
		setValue(s.Index(0), variant)
		f.Set(s)
	case reflect.Struct:
		for i := 0; i < f.NumField(); i++ {
			if f.Type().Field(i).IsExported() {
				setValue(f.Field(i), variant)
			}
		}
	default:
		panic("rowtest: cannot set a " + f.Type().String())
	}
}

// Keyed returns the JSON keys of the columns kept past landing for which
// want is true, each once, in RowColumns order.
func Keyed(want func(schema.RowColumn) bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range schema.RowColumns {
		if c.JSON != "" && want(c) && !seen[c.JSON] {
			seen[c.JSON] = true
			out = append(out, c.JSON)
		}
	}
	return out
}

// Reaches reports whether the field with JSON key key changes out: out is
// applied to rows that differ only in that field, once from the zero row and
// once from a row whose every field is set (variant 1). A field that reaches
// the output only when another is set (a description without its field)
// shows in the second; one that shows only when another is unset (a
// fallback) in the first.
func Reaches[T any](tag, key string, out func(*T) string) bool {
	var zero, set T
	base0 := out(&zero)
	Set(&zero, tag, key, 1)
	if out(&zero) != base0 {
		return true
	}
	Fill(&set, tag, 1)
	base1 := out(&set)
	Set(&set, tag, key, 2)
	return out(&set) != base1
}
