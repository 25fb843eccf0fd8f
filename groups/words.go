package groups

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Title says what the group is, in a few words.
func (g Group) Title() string {
	code := g.Code
	if code == "" {
		code = "no code"
	}
	method := g.Method
	if method == "" {
		method = "(no method)"
	}
	return fmt.Sprintf("%s %s on %s (%s)", g.Kind, code, method, g.Protocol)
}

// VersionList names the versions, newest first ("-" when none named one).
func (g Group) VersionList() string {
	var vs []string
	for _, v := range g.Versions {
		if v.Version != "" {
			vs = append(vs, v.Version)
		}
	}
	if len(vs) == 0 {
		return "-"
	}
	return strings.Join(vs, " ")
}

// WriteText prints groups as a table, one line each, in the order Read
// returns them (the latest seen first), then the reason of each new group
// and regression.
func WriteText(w io.Writer, list []Group) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "no error groups in the range")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tGROUP\tKIND\tCODE\tMETHOD\tPROTOCOL\tERRORS\tCALLERS\tFIRST SEEN (UTC)\tLAST SEEN (UTC)\tVERSIONS\tEXAMPLE")
	for _, g := range list {
		state := string(g.State)
		if state == "" {
			state = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", state, g.ID, g.Kind, dash(g.Code), dash(g.Method), g.Protocol,
			g.Count, g.Callers, g.FirstSeen.UTC().Format("2006-01-02 15:04:05"), g.LastSeen.UTC().Format("2006-01-02 15:04:05"),
			g.VersionList(), dash(g.Example))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range list {
		if g.State != Seen {
			if _, err := fmt.Fprintf(w, "%s %s: %s\n", g.ID, g.State, g.Why); err != nil {
				return err
			}
		}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// HourSpan returns the hours from the one holding from to the one holding
// to, each with the group's count (0 where it had none): the chart's bars.
func (g Group) HourSpan(from, to time.Time) []Hour {
	by := make(map[int64]uint64, len(g.Hours))
	for _, h := range g.Hours {
		by[h.Hour.Unix()] = h.Count
	}
	var out []Hour
	for t := from.UTC().Truncate(time.Hour); t.Before(to); t = t.Add(time.Hour) {
		out = append(out, Hour{Hour: t, Count: by[t.Unix()]})
	}
	return out
}
