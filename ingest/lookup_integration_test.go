package ingest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/redact"
	"github.com/errtrail/errtrail/schema"
)

// TestLookupByValueThatWasHashed: a producer put a customer's e-mail
// address where a request id belongs. The row must not hold the address,
// and a support lookup by the address the customer quotes must still find
// it, by hashing the query with the deployment key (issue 11).
func TestLookupByValueThatWasHashed(t *testing.T) {
	s := newStack(t, 1)
	key := []byte("lookup-test-deployment-key")
	const email = "dana.kowalski@customer.example"
	ev := `{"v":1,"event_id":"lookup-hash-1","observed_at":1764489600123,"agent":"research-agent","caller":"orchestrator-7",` +
		`"method":"SendMessage","request":{"http_request_id":"` + email + `","message_id":"msg-lookup-1"},` +
		`"reply":{"binding":"http","http_status":404,"headers":{"Content-Type":"application/json"},` +
		`"body":"{\"error\":{\"code\":404,\"status\":\"NOT_FOUND\",\"message\":\"Task not found\"}}"}}`
	s.produce(t, []kafka.Message{{Value: []byte(ev)}})
	cfg := s.config(testLogger(t), ingest.NewMetrics(nil))
	cfg.Decoder.HashKey = key
	run := s.start(t, cfg)
	s.waitFor(t, 2*time.Minute, "the row stored", func(c counts) bool { return c.errors >= 1 })
	if err := run.stop(t); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	hashed := redact.New(key).Lookup(email)
	var stored string
	if err := s.conn.QueryRow(ctx, "SELECT http_request_id FROM "+s.sopt.Database+".errors WHERE event_id = 'lookup-hash-1'").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, "dana") || stored != hashed {
		t.Fatalf("stored http_request_id %q; want the keyed hash %q, never the address", stored, hashed)
	}
	if got, err := schema.Lookup(ctx, s.conn, s.sopt, email); err != nil || len(got) != 0 {
		t.Fatalf("Lookup(address) = %d rows, %v; want none: the address is not stored", len(got), err)
	}
	got, err := schema.LookupAny(ctx, s.conn, s.sopt, email, hashed)
	if err != nil || len(got) != 1 || got[0].EventID != "lookup-hash-1" {
		t.Fatalf("LookupAny(address, its hash) = %+v, %v; want the one row", got, err)
	}
	if got, err := schema.LookupAny(ctx, s.conn, s.sopt, "msg-lookup-1"); err != nil || len(got) != 1 {
		t.Fatalf("LookupAny(kept message id) = %d rows, %v; want the row", len(got), err)
	}
	if got, err := schema.LookupAny(ctx, s.conn, s.sopt, redact.New([]byte("another-deployment-key")).Lookup(email)); err != nil || len(got) != 0 {
		t.Fatalf("a hash under another key found %d rows, %v; want none, no error", len(got), err)
	}
}
