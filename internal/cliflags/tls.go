package cliflags

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// TLS is the TLS options of one client, as flags. Config turns them into a
// tls.Config.
type TLS struct {
	Enable             *bool
	CAFile             *string
	CertFile, KeyFile  *string
	ServerName         *string
	InsecureSkipVerify *bool
}

// TLS registers PREFIX.tls, PREFIX.tls.ca-file, .cert-file, .key-file,
// .server-name and .insecure-skip-verify, reading ENVPREFIX_TLS,
// ENVPREFIX_TLS_CA_FILE and so on as early variables (an empty envPrefix
// reads none; Env can add late ones). what names the server in the usage.
func (f *Flags) TLS(prefix, envPrefix, what string) TLS {
	key := func(suffix string) string {
		if envPrefix == "" {
			return ""
		}
		return envPrefix + suffix
	}
	return TLS{
		Enable:             f.Bool(prefix+".tls", key("_TLS"), false, "use TLS to "+what),
		CAFile:             f.String(prefix+".tls.ca-file", key("_TLS_CA_FILE"), "", "PEM file of CAs that sign "+what+"'s certificate (default: system roots)"),
		CertFile:           f.String(prefix+".tls.cert-file", key("_TLS_CERT_FILE"), "", "PEM client certificate for "+what),
		KeyFile:            f.String(prefix+".tls.key-file", key("_TLS_KEY_FILE"), "", "PEM client key for "+what),
		ServerName:         f.String(prefix+".tls.server-name", key("_TLS_SERVER_NAME"), "", "server name to verify (default: the host dialled)"),
		InsecureSkipVerify: f.Bool(prefix+".tls.insecure-skip-verify", key("_TLS_INSECURE_SKIP_VERIFY"), false, "do not verify "+what+"'s certificate (tests only)"),
	}
}

// Config returns nil when TLS is off. Otherwise it returns a config for
// TLS 1.2 or later that trusts the CA file's certificates (the system's
// roots without one) and presents the client certificate when a cert or key
// file is given (both are then needed). It reads the files on every call;
// an unreadable file, or a CA file without a certificate, is an error.
// ServerName is left empty unless set, for the dialler to fill in from the
// address.
func (t TLS) Config() (*tls.Config, error) {
	if !*t.Enable {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: *t.ServerName, InsecureSkipVerify: *t.InsecureSkipVerify}
	if *t.CAFile != "" {
		pem, err := os.ReadFile(*t.CAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no certificate found", *t.CAFile)
		}
		c.RootCAs = pool
	}
	if *t.CertFile != "" || *t.KeyFile != "" {
		kp, err := tls.LoadX509KeyPair(*t.CertFile, *t.KeyFile)
		if err != nil {
			return nil, err
		}
		c.Certificates = []tls.Certificate{kp}
	}
	return c, nil
}
