package cmdkit

import (
	"io"
	"log/slog"

	"github.com/errtrail/errtrail/internal/cliflags"
)

// Log is the --log.level and --log.format flag group. Check fills Level
// and JSON.
type Log struct {
	level, format *string

	Level slog.Level
	JSON  bool
}

// AddLog registers --log.level (debug, info, warn, error; default info)
// and --log.format (text, json; default text) on f. envPrefix, if not
// empty, names their fixed variables (envPrefix + "LOG_LEVEL", ...).
func AddLog(f *cliflags.Flags, envPrefix string) *Log {
	return &Log{
		level:  f.String("log.level", envKey(envPrefix, "log.level"), "info", "debug, info, warn or error"),
		format: f.String("log.format", envKey(envPrefix, "log.format"), "text", "text or json"),
	}
}

// Check reports a level or format that is not one of the above, naming the
// flag and what it wants.
func (l *Log) Check() error {
	if _, err := cliflags.Logger(io.Discard, *l.level, *l.format); err != nil {
		return err
	}
	_ = l.Level.UnmarshalText([]byte(*l.level)) // checked above
	l.JSON = *l.format == "json"
	return nil
}

// Logger returns the logger the checked flags ask for, writing to w.
func (l *Log) Logger(w io.Writer) *slog.Logger {
	ho := &slog.HandlerOptions{Level: l.Level}
	if l.JSON {
		return slog.New(slog.NewJSONHandler(w, ho))
	}
	return slog.New(slog.NewTextHandler(w, ho))
}
