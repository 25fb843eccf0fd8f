package parse

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// eventWithoutObservedAt is event JSON that is valid except that it lacks
// observed_at. internal/decodecli and the ingest integration test
// (TestEventWithoutObservedAtIsDeadLettered) read the same file.
var eventWithoutObservedAt = filepath.Join("testdata", "invalid", "event-without-observed-at.json")

// TestEventWithoutObservedAtIsBadEvent: the contract requires observed_at on
// event JSON, so the same bytes are bad_event whether or not the message has
// a Kafka timestamp (the pipeline passes one, `ingest decode` does not), and
// an errtrail-observed-at header does not stand in for it: headers carry the
// context of the raw forms only.
func TestEventWithoutObservedAtIsBadEvent(t *testing.T) {
	data, err := os.ReadFile(eventWithoutObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	header := []MsgHeader{{Key: "errtrail-observed-at", Value: []byte("1764489600500")}}
	for _, c := range []struct {
		name      string
		headers   []MsgHeader
		kafkaTime int64
	}{
		{"no Kafka time (ingest decode)", nil, 0},
		{"Kafka time (ingest run)", nil, 1764489600000},
		{"Kafka time and header", header, 1764489600000},
	} {
		d := NewDecoder(Options{})
		var rec Record
		err := d.DecodeMessage(data, c.headers, c.kafkaTime, &rec)
		var de *DecodeError
		if !errors.As(err, &de) || de.Reason != ErrBadEvent || de.Path != "event.observed_at" {
			t.Errorf("%s: err = %v; want bad_event at event.observed_at", c.name, err)
		}
	}

	// The same event with observed_at decodes on both paths, with its own
	// time, not the Kafka timestamp.
	with := bytes.Replace(data, []byte(`"v": 1,`), []byte(`"v": 1, "observed_at": 1764489600123,`), 1)
	for _, kafkaTime := range []int64{0, 1764489600000} {
		d := NewDecoder(Options{})
		var rec Record
		if err := d.DecodeMessage(with, nil, kafkaTime, &rec); err != nil {
			t.Fatalf("kafka time %d: %v", kafkaTime, err)
		}
		if rec.ObservedAtMS != 1764489600123 || rec.Kind != KindQuota {
			t.Errorf("kafka time %d: observed_at %d, kind %s; want 1764489600123, quota", kafkaTime, rec.ObservedAtMS, rec.Kind)
		}
	}
}

// TestRawFormObservedAtFallback: the raw forms keep their documented
// fallback: the errtrail-observed-at header, else the Kafka timestamp.
func TestRawFormObservedAtFallback(t *testing.T) {
	raw := httpResp(503, nil, "")
	grpc := []byte("GRPC 200\ngrpc-status: 14\ngrpc-message: overloaded\n")
	header := []MsgHeader{{Key: "errtrail-observed-at", Value: []byte("1764489600500")}}
	for _, c := range []struct {
		name    string
		value   []byte
		headers []MsgHeader
		want    int64
	}{
		{"http, no header", raw, nil, 1764489600000},
		{"http, header", raw, header, 1764489600500},
		{"grpc, no header", grpc, nil, 1764489600000},
		{"grpc, header", grpc, header, 1764489600500},
	} {
		d := NewDecoder(Options{})
		var rec Record
		if err := d.DecodeMessage(c.value, c.headers, 1764489600000, &rec); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if rec.ObservedAtMS != c.want {
			t.Errorf("%s: observed_at %d; want %d", c.name, rec.ObservedAtMS, c.want)
		}
	}
}
