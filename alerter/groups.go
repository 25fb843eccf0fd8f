package alerter

import (
	"context"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/errtrail/errtrail/groups"
)

// dNewGroup is the series the ErrtrailNewErrorGroup ticket reads.
var dNewGroup = desc("error_group_new",
	"1 for each error group first seen in the last hour on an agent seen for an hour before it (never quota; docs/alerting.md#new-error-group). The group label is its id on the groups page.",
	"agent", "group", "protocol", "code", "kind", "method")

// NewGroups finds the error groups that are new (groups.NewAt) and exports
// one errtrail_alerter_error_group_new series per group while it is new:
// for an hour from its first error. It is a prometheus.Collector of its
// own (register it beside Metrics) and is checked by the Runner at most
// every Every.
//
// The alert's "at most one notification per agent per hour, listing every
// new group" is Alertmanager's: the ticket is grouped by agent with a
// group_interval of 1h (alerts/alertmanager.yml), and each group's series
// lasts the hour, so every new group is in one notification at least.
type NewGroups struct {
	Conn     driver.Conn
	Database string        // default "errtrail"
	Every    time.Duration // between reads; default 1m

	mu      sync.Mutex
	last    time.Time
	current []groups.NewGroup
	at      time.Time // the moment current was read for
}

// Check reads the new groups at now unless it read them less than Every
// ago. A failed read keeps the previous answer, without the groups that
// have stopped being new by now, and returns the error.
func (n *NewGroups) Check(ctx context.Context, now time.Time) error {
	every := n.Every
	if every <= 0 {
		every = time.Minute
	}
	n.mu.Lock()
	due := n.last.IsZero() || !now.Before(n.last.Add(every))
	n.mu.Unlock()
	if !due {
		return nil
	}
	db := n.Database
	if db == "" {
		db = "errtrail"
	}
	got, err := groups.NewAt(ctx, n.Conn, db, now)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.last = now
	if err != nil {
		kept := n.current[:0:0]
		for _, g := range n.current {
			if !now.After(g.FirstSeen.Add(groups.Window)) {
				kept = append(kept, g)
			}
		}
		n.current = kept
		return err
	}
	n.current, n.at = got, now
	return nil
}

// Current returns the groups exported now.
func (n *NewGroups) Current() []groups.NewGroup {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]groups.NewGroup(nil), n.current...)
}

// Describe implements prometheus.Collector.
func (n *NewGroups) Describe(ch chan<- *prometheus.Desc) { ch <- dNewGroup }

// Collect implements prometheus.Collector.
func (n *NewGroups) Collect(ch chan<- prometheus.Metric) {
	for _, g := range n.Current() {
		ch <- prometheus.MustNewConstMetric(dNewGroup, prometheus.GaugeValue, 1, g.Agent, g.ID, g.Protocol, g.Code, g.Kind, g.Method)
	}
}
