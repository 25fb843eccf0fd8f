package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// envFlags registers flags whose default comes from an environment variable
// when it is set (flags still win). --help shows the variable of each.
type envFlags struct {
	fs      *flag.FlagSet
	secrets *[]secretFlag
}

// secretFlag is a flag whose env value is read only after parsing, so that
// --help (which prints defaults) never shows a password.
type secretFlag struct {
	name, key string
	v         *string
}

// Secret registers a flag for a credential: its default is never the
// environment's value; resolveSecrets fills it after Parse.
func (e envFlags) Secret(name, key, usage string) *string {
	v := e.fs.String(name, "", e.usage(usage, key))
	*e.secrets = append(*e.secrets, secretFlag{name, key, v})
	return v
}

// resolveSecrets gives each secret flag not set on the command line the
// value of its environment variable.
func (e envFlags) resolveSecrets() {
	set := map[string]bool{}
	e.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, s := range *e.secrets {
		if v, ok := e.env(s.key); ok && !set[s.name] {
			*s.v = v
		}
	}
}

func (e envFlags) env(key string) (string, bool) {
	if key == "" {
		return "", false
	}
	v, ok := os.LookupEnv(key)
	return v, ok && v != ""
}

func (e envFlags) usage(usage, key string) string {
	if key == "" {
		return usage
	}
	return usage + " [env " + key + "]"
}

func (e envFlags) String(name, key, def, usage string) *string {
	if v, ok := e.env(key); ok {
		def = v
	}
	return e.fs.String(name, def, e.usage(usage, key))
}

func (e envFlags) Int(name, key string, def int, usage string) *int {
	if v, ok := e.env(key); ok {
		if n, err := strconv.Atoi(v); err == nil {
			def = n
		} else {
			fmt.Fprintf(os.Stderr, "ignoring %s=%q: not an integer\n", key, v)
		}
	}
	return e.fs.Int(name, def, e.usage(usage, key))
}

func (e envFlags) Bool(name, key string, def bool, usage string) *bool {
	if v, ok := e.env(key); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			def = b
		}
	}
	return e.fs.Bool(name, def, e.usage(usage, key))
}

func (e envFlags) Duration(name, key string, def time.Duration, usage string) *time.Duration {
	if v, ok := e.env(key); ok {
		if d, err := time.ParseDuration(v); err == nil {
			def = d
		}
	}
	return e.fs.Duration(name, def, e.usage(usage, key))
}

// tlsFlags are the TLS options of one client.
type tlsFlags struct {
	enable             *bool
	ca, cert, key      *string
	insecureSkipVerify *bool
	serverName         *string
}

func newTLSFlags(e envFlags, prefix, envPrefix, what string) tlsFlags {
	return tlsFlags{
		enable:             e.Bool(prefix+".tls", envPrefix+"_TLS", false, "use TLS to "+what),
		ca:                 e.String(prefix+".tls.ca-file", envPrefix+"_TLS_CA_FILE", "", "PEM file of CAs that sign "+what+"'s certificate (default: system roots)"),
		cert:               e.String(prefix+".tls.cert-file", envPrefix+"_TLS_CERT_FILE", "", "PEM client certificate for "+what),
		key:                e.String(prefix+".tls.key-file", envPrefix+"_TLS_KEY_FILE", "", "PEM client key for "+what),
		serverName:         e.String(prefix+".tls.server-name", envPrefix+"_TLS_SERVER_NAME", "", "server name to verify (default: the host dialled)"),
		insecureSkipVerify: e.Bool(prefix+".tls.insecure-skip-verify", envPrefix+"_TLS_INSECURE_SKIP_VERIFY", false, "do not verify "+what+"'s certificate (tests only)"),
	}
}

func (t tlsFlags) config() (*tls.Config, error) {
	if !*t.enable {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: *t.serverName, InsecureSkipVerify: *t.insecureSkipVerify}
	if *t.ca != "" {
		pem, err := os.ReadFile(*t.ca)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no certificate found", *t.ca)
		}
		c.RootCAs = pool
	}
	if *t.cert != "" || *t.key != "" {
		kp, err := tls.LoadX509KeyPair(*t.cert, *t.key)
		if err != nil {
			return nil, err
		}
		c.Certificates = []tls.Certificate{kp}
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
