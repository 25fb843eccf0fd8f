package web

import (
	"strconv"
	"time"
)

// Values as the pages print them. Times are UTC with milliseconds, as the
// records store them; unknown values print as "unknown", never as 0.

const unknown = "unknown"

func when(t time.Time) string {
	if t.IsZero() {
		return unknown
	}
	return t.UTC().Format("2006-01-02 15:04:05.000 UTC")
}

// millis prints a duration given in milliseconds the way people read one:
// 250 ms, 1.5 s, 2 min 5 s, 1 h 3 min.
func millis(p *int64) string {
	if p == nil {
		return unknown
	}
	return duration(*p)
}

func duration(ms int64) string {
	neg := ""
	if ms < 0 {
		neg, ms = "-", -ms
	}
	switch {
	case ms < 1000:
		return neg + strconv.FormatInt(ms, 10) + " ms"
	case ms < 60_000:
		s := strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64)
		if ms%1000 == 0 {
			s = strconv.FormatInt(ms/1000, 10)
		}
		return neg + s + " s"
	case ms < 3_600_000:
		m, s := ms/60_000, (ms%60_000)/1000
		if s == 0 {
			return neg + strconv.FormatInt(m, 10) + " min"
		}
		return neg + strconv.FormatInt(m, 10) + " min " + strconv.FormatInt(s, 10) + " s"
	default:
		h, m := ms/3_600_000, (ms%3_600_000)/60_000
		if m == 0 {
			return neg + strconv.FormatInt(h, 10) + " h"
		}
		return neg + strconv.FormatInt(h, 10) + " h " + strconv.FormatInt(m, 10) + " min"
	}
}

func percent(share float64) string {
	p := share * 100
	switch {
	case p == 0:
		return "0 %"
	case p < 0.1:
		return "< 0.1 %"
	case p < 10:
		return strconv.FormatFloat(p, 'f', 1, 64) + " %"
	default:
		return strconv.FormatFloat(p, 'f', 0, 64) + " %"
	}
}

func optInt(p *int) string {
	if p == nil {
		return unknown
	}
	return strconv.Itoa(*p)
}

func optBool(p *bool) string {
	if p == nil {
		return unknown
	}
	return yesNo(*p)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// nextWord says Attempt.Next in words.
func nextWord(next string) string {
	switch next {
	case "error":
		return "another error reply"
	case "none_seen":
		return "no further error seen"
	case "":
		return unknown
	}
	return next
}

// sourceWords says report.Report.Source in words.
func sourceWords(src string) string {
	switch src {
	case "agent":
		return "the replies the agent published itself"
	case "gateway":
		return "the replies a gateway in front of the agent saw"
	case "client":
		return "the replies its callers saw"
	case "mixed":
		return "each agent's own best observer (the agent, else a gateway, else its callers)"
	}
	return "the " + src + " observations"
}
