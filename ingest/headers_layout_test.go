package ingest

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/parse"
)

// TestKafkaHeaderLayout guards the zero-copy conversion in kafkaHeaders: it
// is only sound while kafka.Header and parse.MsgHeader have the same fields,
// types and offsets. A kafka-go upgrade that changes its Header breaks this
// test instead of the ingester.
func TestKafkaHeaderLayout(t *testing.T) {
	k, p := reflect.TypeFor[kafka.Header](), reflect.TypeFor[parse.MsgHeader]()
	if k.Size() != p.Size() || k.NumField() != p.NumField() {
		t.Fatalf("kafka.Header %d bytes, %d fields; parse.MsgHeader %d bytes, %d fields", k.Size(), k.NumField(), p.Size(), p.NumField())
	}
	for i := 0; i < k.NumField(); i++ {
		kf, pf := k.Field(i), p.Field(i)
		if kf.Offset != pf.Offset || kf.Type != pf.Type {
			t.Errorf("field %d: kafka %s %s @%d; parse %s %s @%d", i, kf.Name, kf.Type, kf.Offset, pf.Name, pf.Type, pf.Offset)
		}
	}
	in := []kafka.Header{{Key: "errtrail-agent", Value: []byte("a1")}, {Key: "errtrail-caller", Value: []byte("c1")}}
	out := kafkaHeaders(in)
	if len(out) != 2 || out[0].Key != "errtrail-agent" || string(out[1].Value) != "c1" ||
		unsafe.Pointer(&out[0]) != unsafe.Pointer(&in[0]) {
		t.Errorf("kafkaHeaders(%v) = %v", in, out)
	}
}
