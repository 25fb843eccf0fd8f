// Package cliflags holds the command-line conventions errtrail's commands
// share: flags that fall back to environment variables, credentials that
// --help never shows, deprecated flag names that keep working, and the TLS
// options of a client.
//
// The contract, for every Flags:
//
//   - A flag given on the command line wins over every variable.
//   - A variable that is set but empty counts as unset.
//   - The usage text of a flag that reads variables ends in "[env A]" or
//     "[env A, B]", listing them in order of precedence.
//   - Early variables (the key of String, Int, Bool and Duration) become the
//     flag's default when the flag is registered, so --help shows their
//     value. An unparsable one is ignored and the coded default stays (Int
//     says so on stderr).
//   - Late variables (those of Env, and the key of Secret) are read by
//     Resolve after Parse, for flags not given on the command line; the
//     first one set wins, and an unparsable one is an error naming it. They
//     never become defaults, so --help and Usage never print their values.
//   - A Secret's default is always empty, and no message of this package
//     contains its value.
//   - A deprecated name (Deprecated) sets the flag it stands for, reads its
//     own late variables only when that flag got no value, and is reported
//     once by Deprecations however often it was given.
package cliflags

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Flags registers flags on one flag.FlagSet and remembers which variables
// each reads. Its methods panic when asked about a flag that was not
// registered, which is a mistake in the command, not in its input.
type Flags struct {
	fs      *flag.FlagSet
	late    []*lateFlag // in declaration order
	secret  map[string]bool
	aliases map[string]*alias // by old name
	used    []string          // deprecation notices, in order of first use
}

// lateFlag is a flag with variables read by Resolve.
type lateFlag struct {
	name  string
	keys  []string
	usage string // the usage before "[env ...]" was added
}

// New returns a Flags that registers on fs.
func New(fs *flag.FlagSet) *Flags {
	return &Flags{fs: fs, secret: map[string]bool{}, aliases: map[string]*alias{}}
}

// FlagSet returns the flag.FlagSet the flags are registered on.
func (f *Flags) FlagSet() *flag.FlagSet { return f.fs }

// lookupEnv returns the value of key when it is set and not empty.
func lookupEnv(key string) (string, bool) {
	if key == "" {
		return "", false
	}
	v, ok := os.LookupEnv(key)
	return v, ok && v != ""
}

func withEnv(usage string, keys ...string) string {
	if len(keys) == 0 {
		return usage
	}
	return usage + " [env " + strings.Join(keys, ", ") + "]"
}

// String registers a string flag whose default is key's value when set.
// An empty key reads no variable.
func (f *Flags) String(name, key, def, usage string) *string {
	if v, ok := lookupEnv(key); ok {
		def = v
	}
	return f.fs.String(name, def, withEnv(usage, keys(key)...))
}

// Int registers an int flag whose default is key's value when it is set and
// an integer; another value is reported on stderr and ignored.
func (f *Flags) Int(name, key string, def int, usage string) *int {
	if v, ok := lookupEnv(key); ok {
		if n, err := strconv.Atoi(v); err == nil {
			def = n
		} else {
			fmt.Fprintf(os.Stderr, "ignoring %s=%q: not an integer\n", key, v)
		}
	}
	return f.fs.Int(name, def, withEnv(usage, keys(key)...))
}

// Bool registers a bool flag whose default is key's value when it parses
// as a bool (strconv.ParseBool); another value is ignored.
func (f *Flags) Bool(name, key string, def bool, usage string) *bool {
	if v, ok := lookupEnv(key); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			def = b
		}
	}
	return f.fs.Bool(name, def, withEnv(usage, keys(key)...))
}

// Duration registers a duration flag whose default is key's value when it
// parses (time.ParseDuration); another value is ignored.
func (f *Flags) Duration(name, key string, def time.Duration, usage string) *time.Duration {
	if v, ok := lookupEnv(key); ok {
		if d, err := time.ParseDuration(v); err == nil {
			def = d
		}
	}
	return f.fs.Duration(name, def, withEnv(usage, keys(key)...))
}

func keys(key string) []string {
	if key == "" {
		return nil
	}
	return []string{key}
}

// Secret registers a string flag for a credential. Its default is always
// empty, whatever the environment holds; Resolve fills it from key (and any
// variables Env adds) after Parse. An empty key reads no variable.
func (f *Flags) Secret(name, key, usage string) *string {
	v := f.fs.String(name, "", usage)
	f.secret[name] = true
	f.Env(name, keys(key)...)
	return v
}

// Env adds late variables to the registered flag name, after any it has:
// Resolve reads them in order after Parse. It suits flags registered
// elsewhere on the same FlagSet (a package's RegisterFlags) and flags whose
// bad variable must stop the command; a flag should not have both an early
// key and late variables. Env with no keys does nothing.
func (f *Flags) Env(name string, keys ...string) {
	if len(keys) == 0 {
		return
	}
	fl := f.mustLookup(name)
	i := slices.IndexFunc(f.late, func(l *lateFlag) bool { return l.name == name })
	if i < 0 {
		f.late = append(f.late, &lateFlag{name: name, usage: fl.Usage})
		i = len(f.late) - 1
	}
	l := f.late[i]
	l.keys = append(l.keys, keys...)
	fl.Usage = withEnv(l.usage, l.keys...)
}

// Keys returns the late variables of flag name, in order of precedence.
func (f *Flags) Keys(name string) []string {
	for _, l := range f.late {
		if l.name == name {
			return slices.Clone(l.keys)
		}
	}
	return nil
}

func (f *Flags) mustLookup(name string) *flag.Flag {
	fl := f.fs.Lookup(name)
	if fl == nil {
		panic("cliflags: no flag --" + name)
	}
	return fl
}

// Resolve sets every flag with late variables that the command line did
// not give from the first of its variables that is set. Deprecated names
// come last and only for flags still without a value, so the new name's
// variable wins over the old name's. Call it once, after Parse.
//
// The error names the variable and the flag; it quotes the value unless the
// flag is a Secret.
func (f *Flags) Resolve() error {
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	for _, aliases := range []bool{false, true} {
		for _, l := range f.late {
			a, isAlias := f.aliases[l.name]
			if isAlias != aliases || given[l.name] || (isAlias && given[a.target]) {
				continue
			}
			for _, key := range l.keys {
				v, ok := lookupEnv(key)
				if !ok {
					continue
				}
				if isAlias {
					a.via = key
				}
				if err := f.fs.Set(l.name, v); err != nil {
					if f.secret[l.name] {
						return fmt.Errorf("%s: not a valid value for --%s", key, l.name)
					}
					return fmt.Errorf("%s=%q: not a valid value for --%s: %w", key, v, l.name, err)
				}
				given[l.name] = true
				if isAlias {
					given[a.target] = true
				}
				break
			}
		}
	}
	return nil
}

// Deprecated registers old as a deprecated name of the registered flag
// target: giving --old VALUE sets --target, and Deprecations reports it
// once. When both are given, the later on the command line wins. Its usage
// says it is deprecated and what replaces it.
func (f *Flags) Deprecated(old, target string) {
	t := f.mustLookup(target)
	kind, _ := flag.UnquoteUsage(t)
	usage := "deprecated: old name of --" + target
	if kind != "" {
		usage += " (a `" + kind + "`)"
	}
	usage += "; still accepted, and logs a warning"
	a := &alias{f: f, name: old, target: target}
	f.fs.Var(a, old, usage)
	f.aliases[old] = a
}

// Deprecations returns one notice per deprecated name that was used (on the
// command line or through its variable), in order of first use, for the
// command to log once its logger exists.
func (f *Flags) Deprecations() []string { return slices.Clone(f.used) }

// alias is the flag.Value of a deprecated name.
type alias struct {
	f            *Flags
	name, target string
	via          string // the variable that set it; empty for the command line
	warned       bool
}

func (a *alias) String() string { return "" }

func (a *alias) Set(s string) error {
	if err := a.f.fs.Set(a.target, s); err != nil {
		return err
	}
	if !a.warned {
		a.warned = true
		a.f.used = append(a.f.used, a.notice())
	}
	return nil
}

// IsBoolFlag lets a deprecated name of a bool flag stand alone, as the flag
// itself can.
func (a *alias) IsBoolFlag() bool {
	if a.f == nil {
		return false
	}
	b, ok := a.f.mustLookup(a.target).Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (a *alias) notice() string {
	if a.via == "" {
		return "--" + a.name + " is deprecated: use --" + a.target
	}
	s := a.via + " (--" + a.name + ") is deprecated: use --" + a.target
	if ks := a.f.Keys(a.target); len(ks) > 0 {
		s += " or " + ks[0]
	}
	return s
}

// SplitList splits a comma-separated list, trimming spaces and dropping
// empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
