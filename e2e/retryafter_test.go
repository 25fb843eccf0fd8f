package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/loadgen"
)

// TestLongRetryAfterScenario plays scenarios/long-retry-after.yaml (quotas
// that refill every 20 and every 5 minutes, and one of seconds) unpaced on
// the scenario clock, so its 40 minutes end now, through Kafka, ingest and
// ClickHouse, on a fresh database and after an hour of history; then one
// alerter evaluates it. The callers that honour the delays with the same
// messageId are never flagged, for any delay; the rotating ones are flagged
// for rotating, and for nothing else.
func TestLongRetryAfterScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e")
	}
	for _, history := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprintf("history-%s", history), func(t *testing.T) {
			r := newRig(t, 1)
			r.startIngest()
			sc, err := loadgen.Builtin("long-retry-after")
			if err != nil {
				t.Fatal(err)
			}
			agents := renameAgents(sc, func(a string) string { return "e2e-" + r.id + "-" + a })
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			rep, err := loadgen.Run(ctx, loadgen.Config{Brokers: r.brokers, Topic: r.topic, Scenario: sc,
				Speed: 0, Clock: "scenario", Start: time.Now().Add(-sc.Total()), History: history,
				Compression: true, KeepIDs: -1})
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(2 * time.Minute)
			for {
				errs, dead, err := r.stored()
				if err == nil && int64(errs+dead) >= rep.Produced {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("stored %d + %d of %d messages (%v)", errs, dead, rep.Produced, err)
				}
				time.Sleep(time.Second)
			}
			t.Logf("produced %d messages (%v)", rep.Produced, rep.ByKind())

			r.startAlerter(0)
			var ss []sample
			deadline = time.Now().Add(time.Minute)
			for {
				ss, err = scrape("http://" + r.alerterAddrs[0] + "/metrics")
				if err == nil && len(find(ss, ns+"stale", nil)) == 1 && find(ss, ns+"stale", nil)[0].Value == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no fresh evaluation within a minute (%v)", err)
				}
				time.Sleep(time.Second)
			}
			flagged := map[string]bool{}
			for _, s := range find(ss, ns+"caller_retry_storm", nil) {
				if s.Value == 1 {
					flagged[s.Labels["agent"]+"/"+s.Labels["caller"]+"/"+s.Labels["reason"]] = true
				}
			}
			t.Logf("retry storms: %v", flagged)
			for k := range flagged {
				if strings.Contains(k, "/patient-") {
					t.Errorf("a caller that honoured the delay is flagged: %s", k)
				}
				if !strings.HasSuffix(k, "/rotated_message_id") && !strings.HasSuffix(k, "/rotated_idempotency_key") {
					t.Errorf("flagged for something else than rotating: %s", k)
				}
			}
			for _, want := range []string{
				agents["hourly-agent"] + "/rotating-caller/rotated_message_id",
				agents["five-minute-agent"] + "/rotating-slow/rotated_message_id",
				agents["quick-agent"] + "/rotating-fast/rotated_message_id",
			} {
				if !flagged[want] {
					t.Errorf("not flagged: %s", want)
				}
			}
		})
	}
}

// find returns the samples of name whose labels match labels.
func find(ss []sample, name string, labels map[string]string) []sample {
	var out []sample
	for _, s := range ss {
		if s.Name == name && labelsMatch(s.Labels, labels) {
			out = append(out, s)
		}
	}
	return out
}
