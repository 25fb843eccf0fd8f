package otlpin

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/errtrail/errtrail/parse"
)

func strAttr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// spans builds a message of n failed MCP spans and m successful ones,
// interleaved.
func spans(n, m int) []byte {
	var ss []*tracepb.Span
	for i := 0; n+m > 0; i++ {
		sp := &tracepb.Span{TraceId: []byte("0123456789abcdef"), SpanId: []byte(fmt.Sprintf("span%04d", i)), Kind: tracepb.Span_SPAN_KIND_SERVER,
			EndTimeUnixNano: 1764925200000000000 + uint64(i), Attributes: []*commonpb.KeyValue{strAttr("mcp.method.name", "tools/call")}}
		if n > 0 && (i%2 == 0 || m == 0) {
			n--
			sp.Attributes = append(sp.Attributes, strAttr("error.type", "-32603"))
			sp.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR}
		} else {
			m--
		}
		ss = append(ss, sp)
	}
	b, _ := proto.Marshal(&tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: ss}}}}})
	return b
}

// TestDecodeCounts: a message with N failed spans and M successful ones
// emits exactly N records, at the failed spans' indexes, and counts M as
// ok; the event ids of one message are distinct.
func TestDecodeCounts(t *testing.T) {
	for _, c := range [][2]int{{0, 0}, {1, 0}, {0, 3}, {3, 5}, {7, 2}} {
		d := NewDecoder(Config{})
		var idx []uint32
		ids := map[string]bool{}
		got, err := d.Decode(spans(c[0], c[1]), nil, Format{Traces, Proto}, 1, func(i uint32, rec *parse.Record, derr *parse.DecodeError) {
			if derr != nil || rec.Origin != parse.OriginOTLP || rec.JSONRPCCode != -32603 {
				t.Errorf("%v: index %d: dead %v, origin %q, code %d", c, i, derr, rec.Origin, rec.JSONRPCCode)
			}
			idx = append(idx, i)
			ids[rec.EventID] = true
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.Errors != c[0] || got.OK != c[1] || len(idx) != c[0] || len(ids) != c[0] {
			t.Errorf("%d failed + %d ok: counts %+v, %d emitted, %d distinct ids", c[0], c[1], got, len(idx), len(ids))
		}
		for j := 1; j < len(idx); j++ {
			if idx[j] <= idx[j-1] {
				t.Errorf("%v: indexes not increasing: %v", c, idx)
			}
		}
	}
}

// TestDecodeBadMessage: a message that is not its topic's encoding is a
// bad_otlp error (empty: empty) and emits nothing.
func TestDecodeBadMessage(t *testing.T) {
	for _, tc := range []struct {
		value string
		f     Format
		want  parse.ErrReason
	}{
		{"", Format{Traces, Proto}, parse.ErrEmpty},
		{"\xff\xff\xff\xff", Format{Traces, Proto}, parse.ErrBadOTLP},
		{"{\"resourceSpans\":", Format{Traces, JSON}, parse.ErrBadOTLP},
		{"[1,2]", Format{Traces, JSON}, parse.ErrBadOTLP},
		{`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"not-hex"}]}]}]}`, Format{Traces, JSON}, parse.ErrBadOTLP},
		{`{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":"nonsense"}]}]}]}`, Format{Traces, JSON}, parse.ErrBadOTLP},
		{`{"resourceSpans":[]} {}`, Format{Traces, JSON}, parse.ErrBadOTLP},
		{`{"v":1,"observed_at":1,"reply":{}}`, Format{Traces, Proto}, parse.ErrBadOTLP},
	} {
		d := NewDecoder(Config{})
		_, err := d.Decode([]byte(tc.value), nil, tc.f, 1, func(uint32, *parse.Record, *parse.DecodeError) {
			t.Errorf("%q: emitted a record", tc.value)
		})
		var de *parse.DecodeError
		if !errors.As(err, &de) || de.Reason != tc.want {
			t.Errorf("%q: %v, want reason %s", tc.value, err, tc.want)
		}
		if de != nil && strings.Contains(de.Error(), "nonsense") {
			t.Errorf("the error quotes the input: %v", de)
		}
	}
}

// TestDecodeNoSecrets: no credential or customer value of the fixtures'
// attributes reaches a record (the caller e-mail is hashed, the bearer
// token and cookie attributes are never read, the URL loses its query).
func TestDecodeNoSecrets(t *testing.T) {
	for _, f := range []string{"mcp_spans", "a2a_spans", "mcp_logs"} {
		js := readFixture(t, f)
		sig := Traces
		if strings.Contains(f, "logs") {
			sig = Logs
		}
		out := render(t, js, Format{sig, JSON})
		for _, secret := range []string{"sk-live-4f9a8b7c6d5e4f3a2b1c", "alice@example.com", "555 0134", "abc123secret", "api_key", "abc123", "ghp_0123456789"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s: %q reached a record:\n%s", f, secret, out)
			}
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		topic, s string
		want     Format
		bad      bool
	}{
		{"otlp_spans", "otlp_proto", Format{Traces, Proto}, false},
		{"otlp_logs", "otlp_json", Format{Logs, JSON}, false},
		{"agents.telemetry", "otlp_proto/logs", Format{Logs, Proto}, false},
		{"agents.telemetry", "otlp_proto", Format{}, true},
		{"otlp_spans", "otlp_yaml", Format{}, true},
		{"otlp_spans", "otlp_json/metrics", Format{}, true},
	} {
		f, err := ParseFormat(tc.topic, tc.s)
		if (err != nil) != tc.bad || f != tc.want {
			t.Errorf("%s:%s: %+v, %v", tc.topic, tc.s, f, err)
		}
	}
}

// TestDecodeKafkaHeaders: the headers a Collector adds from the request's
// metadata give agent and caller where the attributes give none, and never
// override an attribute.
func TestDecodeKafkaHeaders(t *testing.T) {
	hs := []parse.MsgHeader{{Key: "errtrail-agent", Value: []byte("hdr-agent")}, {Key: "Errtrail-Caller", Value: []byte("hdr-caller")}}
	var got []string
	d := NewDecoder(Config{})
	_, err := d.Decode(spans(1, 0), hs, Format{Traces, Proto}, 1, func(_ uint32, rec *parse.Record, _ *parse.DecodeError) {
		got = append(got, rec.Agent, rec.Caller)
	})
	if err != nil || len(got) != 2 || got[0] != "hdr-agent" || got[1] != "hdr-caller" {
		t.Errorf("from headers: %q, %v", got, err)
	}
	got = nil
	js := readFixture(t, "mcp_spans")
	_, err = d.Decode(js, hs, Format{Traces, JSON}, 1, func(_ uint32, rec *parse.Record, _ *parse.DecodeError) {
		got = append(got, rec.Agent)
	})
	if err != nil || len(got) == 0 || got[0] != "weather-mcp" {
		t.Errorf("service.name must win over the header: %q, %v", got, err)
	}
	got = nil
	_, _ = d.Decode(spans(1, 0), nil, Format{Traces, Proto}, 1, func(_ uint32, rec *parse.Record, _ *parse.DecodeError) {
		got = append(got, rec.Agent, rec.Caller)
	})
	if len(got) != 2 || got[0] != "" || got[1] != "" {
		t.Errorf("the previous message's headers leaked into the next: %q", got)
	}
}

// TestDecodeServiceVersion: the resource's service.version is the
// record's source_version (error groups' regressions by version), marked
// inferred; a resource without it leaves source_version empty.
func TestDecodeServiceVersion(t *testing.T) {
	var td tracepb.TracesData
	if err := proto.Unmarshal(spans(1, 0), &td); err != nil {
		t.Fatal(err)
	}
	td.ResourceSpans[0].Resource = &resourcepb.Resource{Attributes: []*commonpb.KeyValue{strAttr("service.name", "weather-mcp"), strAttr("service.version", "2.4.1")}}
	withVersion, err := proto.Marshal(&td)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		msg  []byte
		want string
	}{{withVersion, "2.4.1"}, {spans(1, 0), ""}} {
		var got []*parse.Record
		_, err := NewDecoder(Config{}).Decode(c.msg, nil, Format{Traces, Proto}, 1, func(_ uint32, rec *parse.Record, _ *parse.DecodeError) {
			r := *rec
			got = append(got, &r)
		})
		if err != nil || len(got) != 1 {
			t.Fatalf("%d records, %v", len(got), err)
		}
		inferred := strings.Contains(strings.Join(got[0].Inferred, " "), "source_version")
		if got[0].SourceVersion != c.want || inferred != (c.want != "") {
			t.Errorf("source_version %q (inferred %v: %v); want %q", got[0].SourceVersion, inferred, got[0].Inferred, c.want)
		}
	}
}
