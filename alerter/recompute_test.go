package alerter

import (
	"fmt"
	"testing"
	"time"

	"github.com/errtrail/errtrail/incidents"
)

// TestUnitMomentOf: the verdicts of one evaluation become the episodes of
// one agent under way at the moment: its overload and limit too low, its
// flagged runaway callers (with what they were compared with) and retry
// storms, undecided without enough history; nothing of another agent, no
// verdict that did not hold. Pure: the verdicts are built by hand.
func TestUnitMomentOf(t *testing.T) {
	at := time.Unix(1_764_489_600, 0).UTC()
	v := &Verdicts{
		Agents: []AgentVerdict{
			{Agent: "a", Overloaded: true, LimitTooLow: false},
			{Agent: "b", Overloaded: true, LimitTooLow: true},
		},
		Callers: []CallerVerdict{
			{Agent: "a", Caller: "c1", By: ByPeers, Runaway: true},
			{Agent: "a", Caller: "c2", By: ByOwnBaseline, Runaway: false},
			{Agent: "b", Caller: "c3", By: ByOwnBaseline, Runaway: true},
		},
		RetryStorms: []RetryVerdict{
			{Agent: "a", Caller: "c4", Reason: ReasonRotatedMessageID},
			{Agent: "b", Caller: "c4", Reason: ReasonIgnoredRetryAfter},
		},
		HistorySufficient: true,
	}
	m := momentOf(v, "a", at)
	var got []string
	for _, i := range m.Incidents {
		if i.Agent != "a" || !i.Start.Equal(at) || !i.Open() {
			t.Errorf("episode %+v: want agent a, open, started at %v", i, at)
		}
		got = append(got, fmt.Sprintf("%s/%s/%s/%s", i.Kind, i.Caller, i.Reason, i.Detail))
	}
	want := fmt.Sprint([]string{"overload///", "runaway/c1//peers", "retry_storm/c4/rotated_message_id/"})
	if fmt.Sprint(got) != want || !m.Recording {
		t.Errorf("moment of a: recording %v, %v; want recording, %v", m.Recording, got, want)
	}
	v.HistorySufficient = false
	m = momentOf(v, "b", at)
	kinds := map[incidents.Kind]int{}
	for _, i := range m.Incidents {
		kinds[i.Kind]++
	}
	if kinds[incidents.Undecided] != 1 || kinds[incidents.LimitTooLow] != 1 || kinds[incidents.Runaway] != 1 ||
		kinds[incidents.RetryStorm] != 1 || kinds[incidents.Overload] != 1 || len(m.Incidents) != 5 {
		t.Errorf("moment of b without history: %+v", m.Incidents)
	}
}
