package otlpin

import (
	"encoding/base64"
	"encoding/hex"
	"errors"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// unmarshalJSON reads OTLP/JSON. It is protojson's form except that trace
// and span ids are hex strings, where protojson wants base64. A 32- or
// 16-digit hex string is valid base64 too, so protojson reads it as such
// (into 24 or 12 bytes); fixIDs turns those bytes back into the hex text
// and decodes that, which leaves the ids a Collector wrote as they were
// sent and refuses any other.
func unmarshalJSON(value []byte, msg proto.Message) error {
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(value, msg); err != nil {
		return errors.New("not OTLP/JSON of this signal")
	}
	switch m := msg.(type) {
	case *tracepb.TracesData:
		for _, rs := range m.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, sp := range ss.GetSpans() {
					if err := fixIDs(&sp.TraceId, &sp.SpanId, &sp.ParentSpanId); err != nil {
						return err
					}
					for _, l := range sp.GetLinks() {
						if err := fixIDs(&l.TraceId, &l.SpanId, nil); err != nil {
							return err
						}
					}
				}
			}
		}
	case *logspb.LogsData:
		for _, rl := range m.GetResourceLogs() {
			for _, sl := range rl.GetScopeLogs() {
				for _, lr := range sl.GetLogRecords() {
					if err := fixIDs(&lr.TraceId, &lr.SpanId, nil); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// fixIDs converts a trace id and span ids read as base64 back from hex.
func fixIDs(trace, span, parent *[]byte) error {
	for _, c := range []struct {
		p *[]byte
		n int
	}{{trace, 16}, {span, 8}, {parent, 8}} {
		if c.p == nil || len(*c.p) == 0 {
			continue
		}
		text := base64.StdEncoding.EncodeToString(*c.p)
		if len(text) != 2*c.n {
			return errors.New("an id is not hex of its length")
		}
		b, err := hex.DecodeString(text)
		if err != nil {
			return errors.New("an id is not hex")
		}
		*c.p = b
	}
	return nil
}
