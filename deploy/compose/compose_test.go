// Package compose holds the checks of docker-compose.yml, the Dockerfile and
// the configuration under deploy/compose. Docker cannot run here (no engine),
// so these tests check what can be checked without it; docs/compose.md lists
// what they cover and what they cannot.
package compose

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/errtrail/errtrail/dashboards"
	"github.com/errtrail/errtrail/internal/testenv"
)

const root = "../.."

type composeFile struct {
	Services map[string]service `yaml:"services"`
	Volumes  map[string]any     `yaml:"volumes"`
}

type service struct {
	Image       string            `yaml:"image"`
	Build       *build            `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

type build struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

func load(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	if len(c.Services) == 0 {
		t.Fatal("docker-compose.yml has no services")
	}
	return c
}

// The services the brief asks for, each with an image or a build.
func TestServices(t *testing.T) {
	c := load(t)
	for _, name := range []string{"kafka", "clickhouse", "prometheus", "alertmanager", "grafana", "ingest", "alerter", "errtrail", "loadgen"} {
		if _, ok := c.Services[name]; !ok {
			t.Errorf("service %s missing", name)
		}
	}
	for name, s := range c.Services {
		switch {
		case s.Build != nil:
			df := filepath.Join(root, s.Build.Context, s.Build.Dockerfile)
			if _, err := os.Stat(df); err != nil {
				t.Errorf("%s: build dockerfile: %v", name, err)
			}
			if len(s.Command) == 0 {
				t.Errorf("%s: built from the errtrail image but has no command", name)
			}
		case s.Image != "":
			if !strings.Contains(s.Image, ":") || strings.HasSuffix(s.Image, ":latest") {
				t.Errorf("%s: image %q should be pinned to a tag", name, s.Image)
			}
		default:
			t.Errorf("%s: neither image nor build", name)
		}
	}
}

// Every file or folder a service mounts from the repository exists.
func TestMountsExist(t *testing.T) {
	c := load(t)
	for name, s := range c.Services {
		for _, v := range s.Volumes {
			src := strings.SplitN(v, ":", 2)[0]
			if !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "/") {
				if _, ok := c.Volumes[src]; !ok {
					t.Errorf("%s: named volume %s is not declared", name, src)
				}
				continue
			}
			if _, err := os.Stat(filepath.Join(root, src)); err != nil {
				t.Errorf("%s: mounts %s: %v", name, src, err)
			}
		}
	}
}

// No two services publish the same host port.
func TestPortsDistinct(t *testing.T) {
	c := load(t)
	seen := map[string]string{}
	for name, s := range c.Services {
		for _, p := range s.Ports {
			parts := strings.Split(p, ":")
			if len(parts) != 3 || parts[0] != "127.0.0.1" {
				t.Errorf("%s: port %q: want 127.0.0.1:HOST:CONTAINER", name, p)
				continue
			}
			if other, ok := seen[parts[1]]; ok {
				t.Errorf("host port %s published by %s and %s", parts[1], other, name)
			}
			seen[parts[1]] = name
		}
	}
}

// depends_on names real services; service_healthy only where a healthcheck
// exists; every long-running service has a healthcheck.
func TestDependsOn(t *testing.T) {
	c := load(t)
	for name, s := range c.Services {
		if s.Healthcheck == nil && name != "loadgen" {
			t.Errorf("%s has no healthcheck", name)
		}
		for dep, d := range s.DependsOn {
			ds, ok := c.Services[dep]
			if !ok {
				t.Errorf("%s depends on unknown service %s", name, dep)
				continue
			}
			if d.Condition == "service_healthy" && ds.Healthcheck == nil {
				t.Errorf("%s waits for %s to be healthy, which has no healthcheck", name, dep)
			}
		}
	}
}

// Every ERRTRAIL_* variable a service sets is one its binary reads, as its
// --help tells: ingest and loadgen print "[env X]" / "(env X)"; the alerter
// reads ERRTRAIL_ALERTER_<FLAG> for each flag (cmd/alerter envFallback) and
// names its password variable in the help text.
func TestEnvMatchesFlags(t *testing.T) {
	c := load(t)
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+"/", "./cmd/ingest", "./cmd/alerter", "./cmd/errtrail", "./cmd/loadgen")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	help := func(args ...string) string {
		out, _ := exec.Command(filepath.Join(bin, args[0]), args[1:]...).CombinedOutput() // --help exits non-zero
		return string(out)
	}
	reEnv := regexp.MustCompile(`ERRTRAIL_[A-Z0-9_]+`)
	reFlag := regexp.MustCompile(`(?m)^\s+-([a-z0-9.-]+)`)
	known := map[string][]string{
		"ingest":  reEnv.FindAllString(help("ingest", "run", "--help"), -1),
		"loadgen": reEnv.FindAllString(help("loadgen", "demo", "--help"), -1),
		// errtrail serve's usage lists every flag's variables ("[env A, B]").
		"errtrail": reEnv.FindAllString(help("errtrail", "serve", "--help"), -1),
	}
	ah := help("alerter", "--help")
	known["alerter"] = reEnv.FindAllString(ah, -1)
	for _, m := range reFlag.FindAllStringSubmatch(ah, -1) {
		known["alerter"] = append(known["alerter"], "ERRTRAIL_ALERTER_"+strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(m[1])))
	}
	for name, s := range c.Services {
		if s.Build == nil {
			continue
		}
		binName := s.Command[0]
		envs, ok := known[binName]
		if !ok || len(envs) == 0 {
			t.Errorf("%s runs %q, whose flags this test does not know", name, binName)
			continue
		}
		for k := range s.Environment {
			if !slices.Contains(envs, k) {
				t.Errorf("%s sets %s, which %s does not read (%s --help)", name, k, binName, binName)
			}
		}
	}
}

// Prometheus scrapes the ports ingest and the alerter listen on, loads every
// rule file of alerts/, and promtool accepts the config.
func TestPrometheusConfig(t *testing.T) {
	c := load(t)
	b, err := os.ReadFile("prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	alerts, _ := filepath.Glob(filepath.Join(root, "alerts", "*.yml"))
	for _, a := range alerts {
		if filepath.Base(a) == "alertmanager.yml" {
			continue
		}
		if !slices.Contains(cfg.RuleFiles, "/etc/prometheus/alerts/"+filepath.Base(a)) {
			t.Errorf("rule_files lacks alerts/%s", filepath.Base(a))
		}
	}
	listen := map[string]string{
		"errtrail-ingest":  c.Services["ingest"].Environment["ERRTRAIL_INGEST_LISTEN_ADDRESS"],
		"errtrail-alerter": c.Services["alerter"].Environment["ERRTRAIL_ALERTER_HTTP_LISTEN_ADDRESS"],
		"errtrail-serve":   c.Services["errtrail"].Environment["ERRTRAIL_LOOKUP_HTTP_LISTEN_ADDRESS"],
	}
	svc := map[string]string{"errtrail-ingest": "ingest", "errtrail-alerter": "alerter", "errtrail-serve": "errtrail"}
	for _, sc := range cfg.ScrapeConfigs {
		l, ok := listen[sc.JobName]
		if !ok {
			continue
		}
		port := l[strings.LastIndex(l, ":")+1:]
		want := svc[sc.JobName] + ":" + port
		if len(sc.StaticConfigs) != 1 || !slices.Equal(sc.StaticConfigs[0].Targets, []string{want}) {
			t.Errorf("job %s scrapes %v; want [%s] (listen address %s)", sc.JobName, sc.StaticConfigs, want, l)
		}
		if !strings.HasPrefix(l, "0.0.0.0:") {
			t.Errorf("job %s: the service listens on %s, unreachable from the prometheus container", sc.JobName, l)
		}
		delete(listen, sc.JobName)
	}
	for job := range listen {
		t.Errorf("no scrape job %s", job)
	}
	// The alert rules name these jobs. promtool's check is a subtest of its
	// own, so that without promtool outside CI it shows as skipped, not as
	// passed; in CI a missing promtool fails the run.
	t.Run("promtool", func(t *testing.T) {
		promtool := testenv.Binary(t, "promtool")
		dir := t.TempDir()
		abs, _ := filepath.Abs(filepath.Join(root, "alerts"))
		conf := strings.ReplaceAll(string(b), "/etc/prometheus/alerts/", abs+"/")
		if conf == string(b) {
			t.Fatal("prometheus.yml names no rule file under /etc/prometheus/alerts/: promtool would check no rules")
		}
		if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(promtool, "check", "config", filepath.Join(dir, "prometheus.yml")).CombinedOutput(); err != nil {
			t.Errorf("promtool check config: %v\n%s", err, out)
		}
	})
}

// Grafana installs the ClickHouse plugin, provisions the datasources with the
// uids the dashboards default to, and loads dashboards/json from the path the
// provider reads.
func TestGrafanaProvisioning(t *testing.T) {
	c := load(t)
	g := c.Services["grafana"]
	if !strings.Contains(g.Environment["GF_INSTALL_PLUGINS"], dashboards.ClickHousePlugin) {
		t.Errorf("GF_INSTALL_PLUGINS = %q lacks %s", g.Environment["GF_INSTALL_PLUGINS"], dashboards.ClickHousePlugin)
	}
	var ds struct {
		Datasources []struct {
			UID, Type string
		} `yaml:"datasources"`
	}
	readYAML(t, "grafana/provisioning/datasources/errtrail.yml", &ds)
	have := map[string]string{}
	for _, d := range ds.Datasources {
		have[d.UID] = d.Type
	}
	if have[dashboards.ClickHouseUID] != dashboards.ClickHousePlugin || have[dashboards.PrometheusUID] != dashboards.PrometheusPlugin {
		t.Errorf("datasources %v; want %s (%s) and %s (%s)", have,
			dashboards.ClickHouseUID, dashboards.ClickHousePlugin, dashboards.PrometheusUID, dashboards.PrometheusPlugin)
	}
	var dp struct {
		Providers []struct {
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, "grafana/provisioning/dashboards/errtrail.yml", &dp)
	if len(dp.Providers) != 1 {
		t.Fatalf("want one dashboard provider, got %d", len(dp.Providers))
	}
	mount := "./dashboards/json:" + dp.Providers[0].Options.Path + ":ro"
	if !slices.Contains(g.Volumes, mount) {
		t.Errorf("grafana volumes %v lack %s", g.Volumes, mount)
	}
	home := g.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
	if !strings.HasPrefix(home, dp.Providers[0].Options.Path+"/") {
		t.Errorf("home dashboard %s is outside the provisioned path", home)
	} else if _, err := os.Stat(filepath.Join(root, "dashboards/json", filepath.Base(home))); err != nil {
		t.Errorf("home dashboard: %v", err)
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The Dockerfile builds every binary a service runs, and .dockerignore keeps
// out nothing the build needs (packages and embedded files of ./cmd/...).
func TestDockerfile(t *testing.T) {
	c := load(t)
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range c.Services {
		if s.Build == nil {
			continue
		}
		if !strings.Contains(string(df), "./cmd/"+s.Command[0]) || !strings.Contains(string(df), "/out/"+s.Command[0]) {
			t.Errorf("%s runs %s, which the Dockerfile does not build and copy", name, s.Command[0])
		}
	}
	ign, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(ign), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, l)
		}
	}
	list := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{.Dir}}{{range .EmbedFiles}} {{$.Dir}}/{{.}}{{end}}{{end}}`, "./cmd/...")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	absRoot, _ := filepath.Abs(root)
	for _, f := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(absRoot, f)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // module cache
		}
		for _, p := range patterns {
			if ignored(p, rel) {
				t.Errorf(".dockerignore pattern %q excludes %s, which the build needs", p, rel)
			}
		}
	}
}

// ignored approximates Docker's matching: a pattern excludes a path equal to
// it or under it; "**/" matches any depth.
func ignored(pattern, rel string) bool {
	pattern = strings.TrimPrefix(pattern, "/")
	if strings.HasPrefix(pattern, "**/") {
		base := strings.TrimPrefix(pattern, "**/")
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			if ok, _ := filepath.Match(base, part); ok {
				return true
			}
		}
		return false
	}
	for p := rel; p != "." && p != ""; p = filepath.Dir(p) {
		if ok, _ := filepath.Match(pattern, p); ok {
			return true
		}
	}
	return false
}
