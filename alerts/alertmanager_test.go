// Package alerts_test checks the Alertmanager configuration beside the rule
// files: every alert routes to the receiver its severity names (amtool),
// and one incident pages once — the inhibit rules silence, on a real
// Alertmanager, exactly the alerts their cause explains, and nothing of
// another process.
package alerts_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/errtrail/errtrail/internal/testenv"
)

type ruleFile struct {
	Groups []struct {
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// ruleFiles reads every rule file of alerts/ (alerts/*.yml but the
// Alertmanager configuration), by name.
func ruleFiles(t *testing.T) map[string]ruleFile {
	t.Helper()
	files, err := filepath.Glob("*.yml")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]ruleFile{}
	for _, f := range files {
		if f == "alertmanager.yml" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rf ruleFile
		if err := yaml.Unmarshal(b, &rf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = rf
	}
	return out
}

// alertsOf returns every alert of alerts/*.yml with its severity.
func alertsOf(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, rf := range ruleFiles(t) {
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				if r.Alert != "" {
					out[r.Alert] = r.Labels["severity"]
				}
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("found %d alerts in alerts/*.yml; want all of them", len(out))
	}
	return out
}

// TestRoutesBySeverity: amtool routes every alert to the receiver its
// severity names, so a page never lands in the ticket queue or the reverse.
func TestRoutesBySeverity(t *testing.T) {
	testenv.Binary(t, "amtool")
	for alert, sev := range alertsOf(t) {
		if sev != "page" && sev != "ticket" {
			t.Errorf("%s has severity %q; want page or ticket", alert, sev)
			continue
		}
		out, err := exec.Command("amtool", "config", "routes", "test", "--config.file", "alertmanager.yml",
			"alertname="+alert, "severity="+sev, "agent=some-agent", "instance=127.0.0.1:19100").Output()
		if err != nil {
			t.Fatalf("amtool: %v", err)
		}
		if got := strings.TrimSpace(string(out)); got != sev {
			t.Errorf("%s (severity %s) routes to %q; want %q", alert, sev, got, sev)
		}
	}
}

// inhibitions are the pairs alertmanager.yml promises: while source fires
// for a process, target of the same process is silenced (any process, for
// a target that has no instance: errtrail being blind is one alert).
var inhibitions = []struct {
	source, target string
	anyInstance    bool
}{
	{"ErrtrailIngestDown", "ErrtrailIngestStalled", false},
	{"ErrtrailIngestDown", "ErrtrailIngestPermanentFailure", false},
	{"ErrtrailIngestDown", "ErrtrailIngestLagHigh", false},
	{"ErrtrailIngestDown", "ErrtrailIngestLagUnknown", false},
	{"ErrtrailIngestPermanentFailure", "ErrtrailIngestStalled", false},
	{"ErrtrailIngestPermanentFailure", "ErrtrailIngestLagHigh", false},
	{"ErrtrailIngestStalled", "ErrtrailIngestLagHigh", false},
	{"ErrtrailIngestDown", "ErrtrailIngestRowsParked", false},
	{"ErrtrailIngestRowsParked", "ErrtrailIngestLagHigh", false},
	{"ErrtrailAlerterDown", "ErrtrailAlerterStale", true},
}

type amAlert struct {
	Labels   map[string]string `json:"labels"`
	StartsAt time.Time         `json:"startsAt"`
	EndsAt   time.Time         `json:"endsAt"`
	Status   struct {
		State       string   `json:"state"`
		InhibitedBy []string `json:"inhibitedBy"`
	} `json:"status,omitempty"`
}

// TestOneIncidentPagesOnce posts each pair to the stack's Alertmanager
// (started with this file): the target is suppressed while its source
// fires for the same instance, and stays active for another instance and
// when it fires alone. The source itself is never suppressed.
func TestOneIncidentPagesOnce(t *testing.T) {
	am := "http://" + testenv.Alertmanager(t)
	if resp, err := http.Post(am+"/-/reload", "", nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("reload the Alertmanager configuration: %v %v", resp, err)
	}
	sev := alertsOf(t)
	run := fmt.Sprintf("inh-%08x", rand.Uint32())
	now := time.Now().UTC()
	alert := func(name, instance string) amAlert {
		return amAlert{Labels: map[string]string{"alertname": name, "severity": sev[name], "instance": instance, "test_run": run},
			StartsAt: now, EndsAt: now.Add(10 * time.Minute)}
	}
	var posted []amAlert
	post := func(as ...amAlert) {
		t.Helper()
		b, _ := json.Marshal(as)
		resp, err := http.Post(am+"/api/v2/alerts", "application/json", bytes.NewReader(b))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("post alerts: %v %v", resp, err)
		}
		resp.Body.Close()
		posted = append(posted, as...)
	}
	t.Cleanup(func() { // resolve everything this test posted
		for i := range posted {
			posted[i].EndsAt = time.Now().UTC()
		}
		b, _ := json.Marshal(posted)
		if resp, err := http.Post(am+"/api/v2/alerts", "application/json", bytes.NewReader(b)); err == nil {
			resp.Body.Close()
		}
	})
	type want struct {
		name, instance string
		suppressed     bool
	}
	var wants []want
	for i, p := range inhibitions {
		same := fmt.Sprintf("%s-%d-same", run, i)
		other := fmt.Sprintf("%s-%d-other", run, i)
		alone := fmt.Sprintf("%s-%d-alone", run, i)
		post(alert(p.source, same), alert(p.target, same), alert(p.target, other), alert(p.target, alone+"x"))
		wants = append(wants,
			want{p.source, same, false},          // the cause always notifies
			want{p.target, same, true},           // explained by the cause
			want{p.target, other, p.anyInstance}, // another process: its own incident
			// Fired alone: not suppressed, unless the inhibition holds for any
			// instance (then the source posted just above suppresses it too).
			want{p.target, alone + "x", p.anyInstance})
	}
	state := func(name, instance string) (string, error) {
		q := url.Values{"filter": {`test_run="` + run + `"`, `alertname="` + name + `"`, `instance="` + instance + `"`}}
		resp, err := http.Get(am + "/api/v2/alerts?" + q.Encode())
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var got []amAlert
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			return "", err
		}
		if len(got) != 1 {
			return "", fmt.Errorf("%d alerts", len(got))
		}
		if got[0].Status.State == "suppressed" && len(got[0].Status.InhibitedBy) == 0 {
			return "suppressed by a silence", nil
		}
		return got[0].Status.State, nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var wrong []string
		for _, w := range wants {
			st, err := state(w.name, w.instance)
			if err != nil {
				wrong = append(wrong, fmt.Sprintf("%s@%s: %v", w.name, w.instance, err))
				continue
			}
			if (st == "suppressed") != w.suppressed {
				wrong = append(wrong, fmt.Sprintf("%s@%s is %s; want suppressed=%v", w.name, w.instance, st, w.suppressed))
			}
		}
		if len(wrong) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("inhibition after 30 s:\n  %s", strings.Join(wrong, "\n  "))
		}
		time.Sleep(time.Second)
	}
}
