package otlpin

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// unmarshalJSON reads OTLP/JSON: protojson, except that trace and span ids
// are hex strings (OTLP's JSON encoding), not base64.
func unmarshalJSON(value []byte, msg proto.Message) error {
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return errors.New("not JSON")
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	if _, ok := v.(map[string]any); !ok {
		return errors.New("not a JSON object")
	}
	if err := hexIDs(v); err != nil {
		return err
	}
	fixed, err := json.Marshal(v)
	if err != nil {
		return errors.New("not JSON")
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(fixed, msg); err != nil {
		return errors.New("not OTLP/JSON of this signal")
	}
	return nil
}

// hexIDs rewrites the id members from hex to base64, in place.
func hexIDs(v any) error {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch k {
			case "traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id":
				s, ok := e.(string)
				if !ok {
					return errors.New("an id is not a string")
				}
				b, err := hex.DecodeString(s)
				if err != nil {
					return errors.New("an id is not hex")
				}
				x[k] = base64.StdEncoding.EncodeToString(b)
			default:
				if err := hexIDs(e); err != nil {
					return err
				}
			}
		}
	case []any:
		for _, e := range x {
			if err := hexIDs(e); err != nil {
				return err
			}
		}
	}
	return nil
}
