package ingest_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/internal/cmdkit"
	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
)

// TestPermanentFailureStopsWithoutSkipping: an insert into a table that does
// not exist is a permanent error. Ingest stops consuming, reports it
// (Failure, /readyz, permanent_failure) and commits nothing; once the cause
// is fixed, a new run stores every event: none was skipped.
func TestPermanentFailureStopsWithoutSkipping(t *testing.T) {
	s := newStack(t, 2)
	const n = 3000
	s.produce(t, goodEvents("perm", 0, n))

	reg := prometheus.NewRegistry()
	m := ingest.NewMetrics(reg)
	cfg := s.config(testLogger(t), m)
	cfg.Table = s.sopt.Database + ".no_such_table"
	run := s.start(t, cfg)
	waitUntil(t, 2*time.Minute, "the permanent failure", func() bool { return run.p.Failure() != nil })

	srv := httptest.NewServer(cmdkit.Ops(reg, func() (string, error) { return "", run.p.Failure() }))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "schema") {
		t.Errorf("/readyz: %d %q; want 503 naming the schema class", res.StatusCode, body)
	}
	if v := value(m.PermanentFailure); v != 1 {
		t.Errorf("permanent_failure = %v; want 1", v)
	}
	if v := value(m.InsertFailures.WithLabelValues("schema")); v < 1 {
		t.Errorf("insert_failures_total{class=schema} = %v", v)
	}
	mres, _ := http.Get(srv.URL + "/metrics")
	mbody, _ := io.ReadAll(mres.Body)
	mres.Body.Close()
	for _, want := range []string{"errtrail_ingest_permanent_failure 1", `errtrail_ingest_dead_letter_total{reason="too_deep"} 0`} {
		if !strings.Contains(string(mbody), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	err = run.stop(t)
	var perm *ingest.PermanentError
	if !errors.As(err, &perm) || perm.Class != ingest.ClassSchema {
		t.Fatalf("Run = %v; want a PermanentError of class schema", err)
	}
	// Nothing was committed for the group.
	c, err := s.counts(t)
	if err != nil {
		t.Fatalf("counting the rows after the failure: %v", err)
	}
	if c.landed != 0 {
		t.Fatalf("rows landed despite the failure: %s", c)
	}
	checkNothingCommitted(t, s)

	// Fixed: the same group starts from the beginning and stores everything.
	run = s.start(t, s.config(testLogger(t), ingest.NewMetrics(nil)))
	s.waitFor(t, 2*time.Minute, "all events stored", func(c counts) bool { return c.errors >= n })
	if err := run.stop(t); err != nil {
		t.Fatal(err)
	}
	c, _ = s.counts(t)
	checkExact(t, c, n, 0)
}

func checkNothingCommitted(t *testing.T, s *stack) {
	t.Helper()
	client := testenv.KafkaClient(t, s.brokers)
	res, err := client.OffsetFetch(t.Context(), &kafka.OffsetFetchRequest{GroupID: s.group,
		Topics: map[string][]int{s.topic: {0, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Topics[s.topic]); got != 2 {
		t.Fatalf("OffsetFetch answered %d partitions of 2", got)
	}
	for _, p := range res.Topics[s.topic] {
		if p.Error != nil {
			t.Fatalf("OffsetFetch of partition %d: %v", p.Partition, p.Error)
		}
		if p.CommittedOffset >= 0 {
			t.Errorf("partition %d: offset %d committed after a failed insert", p.Partition, p.CommittedOffset)
		}
	}
}

// TestProducerResendsStoredOnce: a producer that re-sends events (same
// event_id, new offsets) gets each stored once; the dedup window drops the
// copies before the insert.
func TestProducerResendsStoredOnce(t *testing.T) {
	s := newStack(t, 4)
	const n = 5000
	evs := goodEvents("resend", 0, n)
	var again []kafka.Message
	for i := 0; i < n; i += 5 {
		again = append(again, kafka.Message{Key: []byte("other-key"), Value: evs[i].Value}) // another partition, too
	}
	s.produce(t, append(evs, again...))
	m := ingest.NewMetrics(nil)
	run := s.start(t, s.config(testLogger(t), m))
	waitUntil(t, 2*time.Minute, "every message consumed and written", func() bool {
		return value(m.Consumed) >= float64(n+len(again)) &&
			value(m.RowsInserted)+value(m.Skipped.WithLabelValues("resent")) >= float64(n+len(again))
	})
	if err := run.stop(t); err != nil {
		t.Fatal(err)
	}
	c, _ := s.counts(t)
	checkExact(t, c, n, 0)
	if v := value(m.Skipped.WithLabelValues("resent")); v != float64(len(again)) {
		t.Errorf("messages_skipped_total{why=resent} = %v; want %d", v, len(again))
	}
}
