package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/errtrail/errtrail/internal/testenv"
)

// promStack is a Prometheus and an Alertmanager of the test's own, started
// from the Debian binaries the local stack installs: Prometheus scrapes
// exactly the test's ingesters and alerters, evaluates alerts/pipeline.yml
// and alerts/verdicts.yml, and sends to an Alertmanager that routes with
// alerts/alertmanager.yml; its receivers deliver to a webhook in the test, so
// a test sees every notification on-call would get, "resolved" included.
type promStack struct {
	prom, am string // host:port
	hook     *webhook
}

// startPromStack starts Prometheus and Alertmanager scraping the rigs.
// Scrape and rule evaluation run every 5 s, as in the local stack.
func startPromStack(t *testing.T, rigs ...*rig) *promStack {
	t.Helper()
	promBin := testenv.Binary(t, "prometheus")
	amBin := testenv.Binary(t, "prometheus-alertmanager")
	root := testenv.ModuleRoot(t)
	dir := t.TempDir()
	ps := &promStack{prom: testenv.FreeAddr(t), am: testenv.FreeAddr(t), hook: newWebhook(t)}

	// Alertmanager: errtrail's routes and inhibitions, with every receiver
	// delivering to the webhook (resolved notifications included).
	amConf := filepath.Join(dir, "alertmanager.yml")
	writeAlertmanagerConfig(t, filepath.Join(root, "alerts", "alertmanager.yml"), amConf, ps.hook.url)
	start(t, "alertmanager", amBin, "--config.file="+amConf, "--storage.path="+filepath.Join(dir, "am-data"),
		"--web.listen-address="+ps.am, "--cluster.listen-address=")

	var alerters, ingesters []string
	for _, r := range rigs {
		alerters = append(alerters, r.alerterAddrs...)
		ingesters = append(ingesters, r.ingestAddr)
	}
	promConf := filepath.Join(dir, "prometheus.yml")
	conf := map[string]any{
		"global":     map[string]any{"scrape_interval": "5s", "evaluation_interval": "5s", "scrape_timeout": "4s"},
		"rule_files": []string{filepath.Join(root, "alerts", "pipeline.yml"), filepath.Join(root, "alerts", "verdicts.yml")},
		"alerting":   map[string]any{"alertmanagers": []any{map[string]any{"static_configs": []any{map[string]any{"targets": []string{ps.am}}}}}},
		"scrape_configs": []any{
			map[string]any{"job_name": "errtrail-alerter", "static_configs": []any{map[string]any{"targets": alerters}}},
			map[string]any{"job_name": "errtrail-ingest", "static_configs": []any{map[string]any{"targets": ingesters}}},
		},
	}
	b, err := yaml.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(promConf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	start(t, "prometheus", promBin, "--config.file="+promConf, "--storage.tsdb.path="+filepath.Join(dir, "prom-data"),
		"--web.listen-address="+ps.prom, "--web.enable-lifecycle")
	waitOK(t, "http://"+ps.am+"/-/ready", time.Minute)
	waitOK(t, "http://"+ps.prom+"/-/ready", time.Minute)
	for _, r := range rigs {
		r.prom = ps.prom
	}
	t.Logf("Prometheus on %s (alerters %v, ingesters %v), Alertmanager on %s, webhook %s",
		ps.prom, alerters, ingesters, ps.am, ps.hook.url)
	return ps
}

// writeAlertmanagerConfig copies errtrail's Alertmanager configuration with
// each receiver replaced by a webhook to url.
func writeAlertmanagerConfig(t *testing.T, from, to, url string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	var conf map[string]any
	if err := yaml.Unmarshal(b, &conf); err != nil {
		t.Fatalf("%s: %v", from, err)
	}
	recv, _ := conf["receivers"].([]any)
	if len(recv) == 0 {
		t.Fatalf("%s has no receivers", from)
	}
	for i, r := range recv {
		m, _ := r.(map[string]any)
		name, _ := m["name"].(string)
		recv[i] = map[string]any{"name": name, "webhook_configs": []any{map[string]any{
			"url": url + "?receiver=" + name, "send_resolved": true}}}
	}
	out, err := yaml.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// start runs a server binary for the rest of the test.
func start(t *testing.T, name, bin string, args ...string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); f.Close(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("last lines of %s's log (%s):\n%s", name, logPath, tail(logPath, 15))
		}
	})
}

func waitOK(t *testing.T, u string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer 200 within %s (%v)", u, within, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// notification is one alert of one webhook delivery from Alertmanager.
type notification struct {
	At          time.Time
	Receiver    string
	Status      string // firing or resolved (of this alert)
	Labels      map[string]string
	Annotations map[string]string
}

// webhook records what Alertmanager delivers.
type webhook struct {
	url  string
	mu   sync.Mutex
	seen []notification
	bad  []string
}

func newWebhook(t *testing.T) *webhook {
	h := &webhook{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			Alerts []struct {
				Status      string            `json:"status"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"alerts"`
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if err := json.Unmarshal(body, &msg); err != nil {
			h.bad = append(h.bad, fmt.Sprintf("%v: %.200s", err, body))
			return
		}
		for _, a := range msg.Alerts {
			h.seen = append(h.seen, notification{At: time.Now(), Receiver: r.URL.Query().Get("receiver"),
				Status: a.Status, Labels: a.Labels, Annotations: a.Annotations})
		}
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// find returns the notifications whose labels match labels and whose
// status is status ("" for any).
func (h *webhook) find(labels map[string]string, status string) []notification {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []notification
	for _, n := range h.seen {
		if labelsMatch(n.Labels, labels) && (status == "" || n.Status == status) {
			out = append(out, n)
		}
	}
	return out
}

func (h *webhook) malformed() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bad...)
}

func (n notification) String() string {
	return fmt.Sprintf("%s %s %s %v", n.At.Format("15:04:05"), n.Receiver, n.Status, n.Labels)
}

func joinNotes(ns []notification) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = n.String()
	}
	return strings.Join(s, "; ")
}
