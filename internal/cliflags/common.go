package cliflags

import (
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
)

// EnvNames returns the variables flag name of a command reads, in order of
// precedence: <prefix><NAME> (NAME upper-cased, '.' and '-' as '_'), then,
// for a flag under one of shared (such as "clickhouse." or "log.", flags
// ingest has too, with the same meaning), ingest's ERRTRAIL_<NAME>. The
// command's own variable comes first, so that one environment can give two
// commands different settings (a read-only ClickHouse user, say).
func EnvNames(prefix, name string, shared ...string) []string {
	n := strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(name))
	for _, s := range shared {
		if strings.HasPrefix(name, s) {
			return []string{prefix + n, "ERRTRAIL_" + n}
		}
	}
	return []string{prefix + n}
}

// Logger returns the logger --log.level (debug, info, warn, error) and
// --log.format (text, json) ask for, writing to w.
func Logger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log.level %q: want debug, info, warn or error", level)
	}
	ho := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, fmt.Errorf("--log.format %q: want text or json", format)
}

// BaseURL checks the value of flag as an http(s) base URL ("" is allowed:
// no link) and drops a trailing slash, so that paths can be appended. The
// error does not quote the value: a URL may hold credentials.
func BaseURL(flag, v string) (string, error) {
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("--%s: want an http(s) base URL without credentials, query or fragment", flag)
	}
	return strings.TrimRight(u.String(), "/"), nil
}
