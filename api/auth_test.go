package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestUnitAuth: with a token file, /v1 needs an accepted bearer token
// (401 with WWW-Authenticate and no detail otherwise), probes never do,
// /metrics only with MetricsAuth; failures are counted by reason (another
// scheme or an empty token is "missing") and no
// token reaches the log.
func TestUnitAuth(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	writeFile(t, file, "# support team\n\n  tok-file-AAAA  \n#tok-commented-out\n")
	t.Setenv("ERRTRAIL_TEST_TOKENS", "tok-env-BBBB, tok-env-CCCC")
	h := newHarness(t, func(c *Config) { c.TokenFile, c.TokensEnv = file, "ERRTRAIL_TEST_TOKENS" })

	for _, c := range []struct {
		name   string
		header []string
		status int
	}{
		{"no token", nil, 401},
		{"wrong token", []string{"Authorization: Bearer tok-wrong"}, 401},
		{"a prefix of a token", []string{"Authorization: Bearer tok-file-AA"}, 401},
		{"commented-out token", []string{"Authorization: Bearer #tok-commented-out"}, 401},
		{"basic scheme", []string{"Authorization: Basic dG9rLWZpbGUtQUFBQQ=="}, 401},
		{"empty bearer", []string{"Authorization: Bearer "}, 401},
		{"file token", []string{"Authorization: Bearer tok-file-AAAA"}, 200},
		{"env token, lower-case scheme", []string{"Authorization: bearer tok-env-CCCC"}, 200},
	} {
		a := h.get("/v1/errors/x", c.header...)
		if a.status != c.status {
			t.Errorf("%s: %d; want %d", c.name, a.status, c.status)
		}
		if c.status == 401 {
			if !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s: WWW-Authenticate %q", c.name, a.header.Get("WWW-Authenticate"))
			}
			if strings.Contains(string(a.body), `"detail"`) {
				t.Errorf("%s: 401 with a detail: %s", c.name, a.body)
			}
		}
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		if a := h.get(p); a.status != 200 {
			t.Errorf("%s without a token: %d", p, a.status)
		}
	}
	m := h.metrics()
	for _, want := range []string{`errtrail_api_auth_failures_total{reason="missing"} 3`, `errtrail_api_auth_failures_total{reason="invalid"} 3`} {
		if !strings.Contains(m, want) {
			t.Errorf("want %s in\n%s", want, grepLines(m, "auth_failures"))
		}
	}
	for _, tok := range []string{"tok-file-AAAA", "tok-env-BBBB", "tok-env-CCCC", "tok-wrong", "tok-file-AA", "dG9r"} {
		if strings.Contains(h.logs.String(), tok) || strings.Contains(m, tok) {
			t.Errorf("%s in the log or the metrics", tok)
		}
	}

	hm := newHarness(t, func(c *Config) { c.TokenFile, c.MetricsAuth = file, true })
	if a := hm.get("/metrics"); a.status != 401 {
		t.Errorf("/metrics with MetricsAuth, no token: %d", a.status)
	}
	if a := hm.get("/metrics", "Authorization: Bearer tok-file-AAAA"); a.status != 200 {
		t.Errorf("/metrics with MetricsAuth and a token: %d", a.status)
	}
	if a := hm.get("/readyz"); a.status != 200 {
		t.Errorf("/readyz with MetricsAuth: %d", a.status)
	}
}

// TestUnitTokenReload: the file is re-read once TokenReload has passed: a
// token added is accepted, one removed refused, an emptied file refuses
// all of its former tokens, an unreadable file keeps the last ones. With
// TokenReload 0 the file is read once.
func TestUnitTokenReload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	writeFile(t, file, "tok-old\n")
	h := newHarness(t, func(c *Config) { c.TokenFile, c.TokenReload = file, time.Minute })
	auth := func(tok string) int { return h.get("/v1/errors/x", "Authorization: Bearer "+tok).status }

	writeFile(t, file, "tok-new\n")
	if auth("tok-old") != 200 || auth("tok-new") != 401 {
		t.Errorf("re-read before TokenReload passed")
	}
	h.clock.Add(time.Minute)
	if auth("tok-new") != 200 || auth("tok-old") != 401 {
		t.Errorf("not re-read after TokenReload")
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	h.clock.Add(time.Minute)
	if auth("tok-new") != 200 {
		t.Errorf("an unreadable file dropped the tokens last read")
	}
	writeFile(t, file, "# revoked everyone\n")
	h.clock.Add(time.Minute)
	if auth("tok-new") != 401 {
		t.Errorf("an emptied file kept its former token")
	}
	m := h.metrics()
	if !strings.Contains(m, `errtrail_api_token_file_reloads_total{result="error"} 1`) || !strings.Contains(m, `errtrail_api_token_file_reloads_total{result="ok"} 2`) {
		t.Errorf("reloads:\n%s", grepLines(m, "reloads"))
	}
	if strings.Contains(h.logs.String(), "tok-new") {
		t.Errorf("a token in the log")
	}

	writeFile(t, file, "tok-a\n")
	once := newHarness(t, func(c *Config) { c.TokenFile, c.TokenReload = file, 0 })
	writeFile(t, file, "tok-b\n")
	once.clock.Add(time.Hour)
	if once.get("/v1/errors/x", "Authorization: Bearer tok-a").status != 200 || once.get("/v1/errors/x", "Authorization: Bearer tok-b").status != 401 {
		t.Errorf("TokenReload 0 re-read the file")
	}
}

// TestUnitTokenSources: auth that was asked for and has no token, or
// cannot read its source, stops New; its errors never quote a token.
func TestUnitTokenSources(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	writeFile(t, empty, "# nothing yet\n\n")
	spaced := filepath.Join(dir, "spaced")
	writeFile(t, spaced, "tok-ok\ntok with-SECRET-space\n")
	t.Setenv("ERRTRAIL_TEST_EMPTY", " , ")
	for name, mod := range map[string]func(*Config){
		"empty file":     func(c *Config) { c.TokenFile = empty },
		"missing file":   func(c *Config) { c.TokenFile = filepath.Join(dir, "none") },
		"unset variable": func(c *Config) { c.TokensEnv = "ERRTRAIL_TEST_UNSET_VARIABLE" },
		"empty variable": func(c *Config) { c.TokensEnv = "ERRTRAIL_TEST_EMPTY" },
		"spaced token":   func(c *Config) { c.TokenFile = spaced },
	} {
		c := DefaultConfig()
		mod(&c)
		_, err := New(c, &fakeService{}, &fakeReporter{}, newRegistry())
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "tok-ok") {
			t.Errorf("%s: error quotes a token: %v", name, err)
		}
	}
}
