package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Count is the number of messages Kafka acknowledged for one agent × caller
// × kind × source (source.kind: agent or gateway).
type Count struct {
	Agent  string `json:"agent"`
	Caller string `json:"caller"`
	Kind   Kind   `json:"kind"`
	Source string `json:"source"`
	N      int64  `json:"n"`
}

// Admitted is the number of calls one agent admitted from one caller. They
// produce no event; the limiter simulation counts them.
type Admitted struct {
	Agent  string `json:"agent"`
	Caller string `json:"caller"`
	N      int64  `json:"n"`
}

// Report says what a run produced. Marshalled as JSON it is the manifest
// (--manifest): every count is of messages Kafka acknowledged, history
// included, so a test can assert rows(errors) + rows(dead_letter) ==
// Produced, and distinct event_ids in errors == Valid with the same
// EventIDHash; History counts the history's share apart.
type Report struct {
	Scenario string    `json:"scenario"`
	RunID    string    `json:"run_id"` // prefix of every event_id of this run
	Topic    string    `json:"topic"`
	Clock    string    `json:"clock"`
	Speed    float64   `json:"speed"` // 0: unpaced (flood)
	Started  time.Time `json:"started"`
	// ScenarioStarted is when the scenario began to play: Started, or after
	// the history when there is one.
	ScenarioStarted time.Time `json:"scenario_started"`
	Finished        time.Time `json:"finished"`
	// Wall-clock range of the observed_at values written (Unix ms).
	FirstObservedMS int64 `json:"first_observed_at"`
	LastObservedMS  int64 `json:"last_observed_at"`

	ElapsedSec  float64 `json:"elapsed_s"`  // history included
	ScenarioSec float64 `json:"scenario_s"` // scenario time covered (the history's not included)

	// History is what the history produced (nil without one). Every count
	// below includes it.
	History *HistoryReport `json:"history,omitempty"`

	Produced     int64            `json:"produced"` // acknowledged messages: valid + poison
	Valid        int64            `json:"valid"`    // event JSON messages
	Poison       int64            `json:"poison"`
	PoisonByKind map[string]int64 `json:"poison_by_kind"`
	Failed       int64            `json:"failed"` // messages Kafka did not take after retries
	Bytes        int64            `json:"bytes"`  // acknowledged value bytes

	Requests      int64      `json:"requests"` // calls simulated (first tries and retries)
	AdmittedTotal int64      `json:"admitted"`
	Admitted      []Admitted `json:"admitted_by"`
	By            []Count    `json:"by"`

	// EventIDHash is the sum, modulo 2^64, of ClickHouse's cityHash64 of
	// every valid event's event_id: order-free, so a test can compare it with
	// SELECT sum(cityHash64(event_id)) over the distinct ids it finds.
	EventIDHash uint64 `json:"event_id_cityhash64_sum"`
	// EventIDs lists the valid events' ids when there are at most
	// Config.KeepIDs of them (sorted); otherwise it is empty.
	EventIDs []string `json:"event_ids,omitempty"`

	EventsPerSec float64 `json:"events_per_s"` // Produced / elapsed
	MBPerSec     float64 `json:"mb_per_s"`     // Bytes / elapsed, MB = 10^6 bytes
}

// WriteManifest writes the report as indented JSON to path.
func (r *Report) WriteManifest(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ByKind sums the counts per kind and source ("quota", "gateway/quota", ...).
func (r *Report) ByKind() map[string]int64 {
	m := map[string]int64{}
	for _, c := range r.By {
		k := string(c.Kind)
		if c.Source != "agent" {
			k = c.Source + "/" + k
		}
		m[k] += c.N
	}
	return m
}

// WriteText writes the human summary printed at the end of a run.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "\nloadgen: scenario %s, run %s, topic %s\n", r.Scenario, r.RunID, r.Topic)
	fmt.Fprintf(w, "  %d messages in %.1f s (%.0f events/s, %.2f MB/s); scenario time %.1f s, clock %s\n",
		r.Produced, r.ElapsedSec, r.EventsPerSec, r.MBPerSec, r.ScenarioSec, r.Clock)
	fmt.Fprintf(w, "  valid %d, poison %d, failed %d; calls simulated %d, admitted %d (admitted calls produce no event)\n",
		r.Valid, r.Poison, r.Failed, r.Requests, r.AdmittedTotal)
	if h := r.History; h != nil {
		fmt.Fprintf(w, "  of which history: %d messages observed from %s to %s (%s), published in %.1f s (%.0f events/s); calls simulated %d, admitted %d\n",
			h.Produced, time.UnixMilli(h.FromMS).Format("15:04:05.000"), time.UnixMilli(h.ToMS).Format("15:04:05.000"),
			time.Duration(h.ToMS-h.FromMS)*time.Millisecond, h.ElapsedSec, h.EventsPerSec, h.Requests, h.AdmittedTotal)
	}
	if r.Poison > 0 {
		fmt.Fprintf(w, "  poison by kind: %s\n", fmtMap(r.PoisonByKind))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	type agg struct{ quota, overload, untyped, gateway, admitted int64 }
	per := map[string]*agg{}
	get := func(k string) *agg {
		if per[k] == nil {
			per[k] = &agg{}
		}
		return per[k]
	}
	callers := map[string]*agg{}
	for _, c := range r.By {
		a := get(c.Agent)
		if callers[c.Caller] == nil {
			callers[c.Caller] = &agg{}
		}
		cc := callers[c.Caller]
		if c.Source == "gateway" {
			a.gateway += c.N
			cc.gateway += c.N
			continue
		}
		switch c.Kind {
		case KindQuota:
			a.quota += c.N
			cc.quota += c.N
		case KindOverload:
			a.overload += c.N
			cc.overload += c.N
		default:
			a.untyped += c.N
			cc.untyped += c.N
		}
	}
	for _, ad := range r.Admitted {
		get(ad.Agent).admitted += ad.N
		if callers[ad.Caller] == nil {
			callers[ad.Caller] = &agg{}
		}
		callers[ad.Caller].admitted += ad.N
	}
	fmt.Fprintln(tw, "  agent\tquota\toverload\tuntyped\tgateway views\tadmitted")
	for _, k := range sortedKeys(per) {
		a := per[k]
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\n", k, a.quota, a.overload, a.untyped, a.gateway, a.admitted)
	}
	tw.Flush()
	keys := sortedKeys(callers)
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := callers[keys[i]], callers[keys[j]]
		return a.quota+a.overload+a.untyped > b.quota+b.overload+b.untyped
	})
	if len(keys) > 10 {
		fmt.Fprintf(w, "  top 10 of %d callers by errors:\n", len(keys))
		keys = keys[:10]
	}
	fmt.Fprintln(tw, "  caller\tquota\toverload\tuntyped\tgateway views\tadmitted")
	for _, k := range keys {
		a := callers[k]
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\n", k, a.quota, a.overload, a.untyped, a.gateway, a.admitted)
	}
	tw.Flush()
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

func fmtMap(m map[string]int64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}
