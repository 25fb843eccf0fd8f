package cliflags

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func newSet() (*Flags, *bytes.Buffer) {
	var out bytes.Buffer
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(&out)
	return New(fs), &out
}

// Early variables become defaults; the command line wins; an empty or
// unparsable variable leaves the coded default.
func TestEarlyEnv(t *testing.T) {
	t.Setenv("T_STR", "from-env")
	t.Setenv("T_INT", "42")
	t.Setenv("T_BOOL", "true")
	t.Setenv("T_DUR", "250ms")
	t.Setenv("T_EMPTY", "")
	t.Setenv("T_BADDUR", "soon")
	f, out := newSet()
	s := f.String("s", "T_STR", "def", "a string")
	n := f.Int("n", "T_INT", 1, "an int")
	b := f.Bool("b", "T_BOOL", false, "a bool")
	d := f.Duration("d", "T_DUR", time.Second, "a duration")
	e := f.String("e", "T_EMPTY", "kept", "empty variable")
	bad := f.Duration("bad", "T_BADDUR", time.Minute, "bad variable")
	none := f.String("none", "", "x", "no variable")
	if err := f.FlagSet().Parse([]string{"-n", "7"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Resolve(); err != nil {
		t.Fatal(err)
	}
	if *s != "from-env" || *n != 7 || !*b || *d != 250*time.Millisecond || *e != "kept" || *bad != time.Minute || *none != "x" {
		t.Errorf("got s=%q n=%d b=%v d=%v e=%q bad=%v none=%q", *s, *n, *b, *d, *e, *bad, *none)
	}
	f.FlagSet().PrintDefaults()
	for _, want := range []string{"a string [env T_STR]", "an int [env T_INT]", `(default "from-env")`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out.String(), "no variable [env") {
		t.Errorf("a flag without a variable names one:\n%s", out)
	}
}

// Late variables are read after Parse, in order; the command line wins; an
// unparsable one is an error that names it.
func TestLateEnv(t *testing.T) {
	t.Setenv("T_FIRST", "")
	t.Setenv("T_SECOND", "2m")
	t.Setenv("T_NAME", "env-name")
	f, out := newSet()
	d := f.FlagSet().Duration("d", time.Second, "a duration")
	name := f.FlagSet().String("name", "def", "a name")
	f.Env("d", "T_FIRST", "T_SECOND")
	f.Env("name", "T_NAME")
	if err := f.FlagSet().Parse([]string{"-name", "flag"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Resolve(); err != nil {
		t.Fatal(err)
	}
	if *d != 2*time.Minute || *name != "flag" {
		t.Errorf("d=%v name=%q; want 2m (second variable, first empty) and flag", *d, *name)
	}
	if got := f.Keys("d"); strings.Join(got, " ") != "T_FIRST T_SECOND" {
		t.Errorf("Keys = %v", got)
	}
	f.FlagSet().PrintDefaults()
	if !strings.Contains(out.String(), "a duration [env T_FIRST, T_SECOND] (default 1s)") {
		t.Errorf("usage does not list the variables in order:\n%s", out)
	}

	t.Setenv("T_FIRST", "soon")
	f, _ = newSet()
	f.FlagSet().Duration("d", time.Second, "a duration")
	f.Env("d", "T_FIRST")
	f.FlagSet().Parse(nil)
	err := f.Resolve()
	if err == nil || !strings.Contains(err.Error(), "T_FIRST") || !strings.Contains(err.Error(), "--d") {
		t.Errorf("Resolve = %v; want an error naming T_FIRST and --d", err)
	}
}

// A secret's variable is read after Parse and never printed by --help, by
// the default Usage or by PrintDefaults.
func TestSecretNeverInHelp(t *testing.T) {
	const pw = "hunter2-secret"
	t.Setenv("T_PASSWORD", pw)
	t.Setenv("T_PASSWORD_OLD", pw+"-old")
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-nope"}} {
		f, out := newSet()
		p := f.Secret("password", "T_PASSWORD", "the password")
		f.Env("password", "T_PASSWORD_OLD")
		err := f.FlagSet().Parse(args)
		if err == nil {
			t.Fatalf("%v: parse succeeded", args)
		}
		f.FlagSet().Usage()
		f.FlagSet().PrintDefaults()
		if strings.Contains(out.String(), pw) || *p != "" {
			t.Errorf("%v: the secret leaked before Resolve: %q\n%s", args, *p, out)
		}
		if !strings.Contains(out.String(), "the password [env T_PASSWORD, T_PASSWORD_OLD]") {
			t.Errorf("%v: usage does not name the variables:\n%s", args, out)
		}
	}
	f, _ := newSet()
	p := f.Secret("password", "T_PASSWORD", "the password")
	f.FlagSet().Parse(nil)
	if err := f.Resolve(); err != nil || *p != pw {
		t.Errorf("Resolve: %v, password set=%v", err, *p == pw)
	}
	f, _ = newSet()
	p = f.Secret("password", "T_PASSWORD", "the password")
	f.FlagSet().Parse([]string{"-password", "flag"})
	f.Resolve()
	if *p != "flag" {
		t.Error("the command line did not win over the variable")
	}
}

// A deprecated name sets its flag, is reported once, and its variable
// loses to the new name's.
func TestDeprecated(t *testing.T) {
	setup := func() (*Flags, *time.Duration, *bool, *bytes.Buffer) {
		f, out := newSet()
		d := f.FlagSet().Duration("new.after", time.Minute, "how long")
		b := f.FlagSet().Bool("new.on", false, "switch")
		f.Deprecated("after", "new.after")
		f.Deprecated("on", "new.on")
		f.FlagSet().VisitAll(func(fl *flag.Flag) {
			f.Env(fl.Name, "T_"+strings.ToUpper(strings.NewReplacer(".", "_").Replace(fl.Name)))
		})
		return f, d, b, out
	}

	f, d, b, out := setup()
	if err := f.FlagSet().Parse([]string{"-after", "2m", "-after", "3m", "-on"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Resolve(); err != nil {
		t.Fatal(err)
	}
	if *d != 3*time.Minute || !*b {
		t.Errorf("new.after=%v new.on=%v; want 3m, true", *d, *b)
	}
	got := f.Deprecations()
	if len(got) != 2 || got[0] != "--after is deprecated: use --new.after" || got[1] != "--on is deprecated: use --new.on" {
		t.Errorf("Deprecations = %q; want one notice per old name", got)
	}
	f.FlagSet().PrintDefaults()
	if !strings.Contains(out.String(), "-after duration\n    \tdeprecated: old name of --new.after (a duration); still accepted, and logs a warning") {
		t.Errorf("usage does not say the name is deprecated:\n%s", out)
	}

	// The old name's variable applies when the new name got nothing...
	t.Setenv("T_AFTER", "5m")
	f, d, _, _ = setup()
	f.FlagSet().Parse(nil)
	if err := f.Resolve(); err != nil {
		t.Fatal(err)
	}
	if *d != 5*time.Minute {
		t.Errorf("new.after=%v; want 5m from T_AFTER", *d)
	}
	if got := f.Deprecations(); len(got) != 1 || got[0] != "T_AFTER (--after) is deprecated: use --new.after or T_NEW_AFTER" {
		t.Errorf("Deprecations = %q", got)
	}
	// ...and loses to the new name's variable and to the command line.
	t.Setenv("T_NEW_AFTER", "6m")
	f, d, _, _ = setup()
	f.FlagSet().Parse(nil)
	f.Resolve()
	if *d != 6*time.Minute || len(f.Deprecations()) != 0 {
		t.Errorf("new.after=%v, notices %q; want 6m from T_NEW_AFTER and none", *d, f.Deprecations())
	}
	f, d, _, _ = setup()
	f.FlagSet().Parse([]string{"-after", "7m"})
	f.Resolve()
	if *d != 7*time.Minute {
		t.Errorf("new.after=%v; want 7m from the command line", *d)
	}
}

func TestSplitList(t *testing.T) {
	if got := SplitList(" a:1, ,b:2,"); len(got) != 2 || got[0] != "a:1" || got[1] != "b:2" {
		t.Errorf("SplitList = %q", got)
	}
	if got := SplitList(" , "); got != nil {
		t.Errorf("SplitList of blanks = %q", got)
	}
}

// Unregistered flags are the command's bug: they panic at start-up.
func TestUnknownFlagPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Env of an unknown flag did not panic")
		}
	}()
	f, _ := newSet()
	f.FlagSet().SetOutput(io.Discard)
	f.Env("missing", "X")
}
