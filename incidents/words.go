package incidents

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Title says what the episode was, in a few words.
func (i Incident) Title() string {
	switch i.Kind {
	case Overload:
		return i.Agent + " overloaded: it failed for all callers"
	case Runaway:
		return "caller " + i.Caller + " of " + i.Agent + " ran away"
	case LimitTooLow:
		return "the quota of " + i.Agent + " rejected most of its callers at once"
	case RetryStorm:
		return "caller " + i.Caller + " retried " + i.Agent + " badly (" + i.Reason + ")"
	case GatewayMangling:
		return "a gateway rewrote the error replies of " + i.Agent
	case UntypedErrors:
		return i.Agent + " answered errors without a typed reason"
	case Undecided:
		return "errtrail could not yet tell whether " + i.Agent + " had " + strings.ReplaceAll(i.Reason, "_", " ") + " (too little history)"
	}
	return string(i.Kind) + " " + i.Agent
}

// Peak says the episode's peak figures in words.
func (i Incident) Peak() string {
	switch i.Kind {
	case Overload:
		return fmt.Sprintf("%.2f overload replies/s from %d callers (baseline %.2f/s)", i.PeakRate, i.PeakCallers, i.BaselineRate)
	case Runaway:
		by := "its own baseline"
		if i.Detail == "peers" {
			by = "its peers"
		}
		return fmt.Sprintf("%.0f errors/min, %.0fx %s", i.PeakRate*60, i.PeakScore, by)
	case LimitTooLow:
		return fmt.Sprintf("%.2f quota rejections/s, %d callers rising", i.PeakRate, i.PeakCallers)
	case RetryStorm:
		return fmt.Sprintf("%d bad retries, %.0f%% of the retries", i.PeakCount, i.PeakScore*100)
	case GatewayMangling:
		return fmt.Sprintf("%d replies rewritten, %.0f%% of those seen by both", i.PeakCount, i.PeakScore*100)
	case UntypedErrors:
		return fmt.Sprintf("%.0f%% of %.2f errors/s untyped", i.PeakScore*100, i.PeakRate)
	case Undecided:
		return fmt.Sprintf("%d callers undecided", i.PeakCallers)
	}
	return ""
}

// WriteText prints episodes as a table, one line each, the latest start
// first as Read returns them.
func WriteText(w io.Writer, list []Incident) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "no incidents in the range")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "START (UTC)\tLASTED\tSTATE\tKIND\tAGENT\tCALLER\tREASON\tPEAK")
	for _, i := range list {
		state, lasted := "ended", i.Duration()
		if i.Open() {
			state = "open, last seen " + i.LastSeen.Format("15:04:05")
		}
		caller, reason := i.Caller, i.Reason
		if caller == "" {
			caller = "-"
		}
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i.Start.UTC().Format("2006-01-02 15:04:05"),
			lasted.Round(time.Second), state, i.Kind, i.Agent, caller, reason, i.Peak())
	}
	return tw.Flush()
}
