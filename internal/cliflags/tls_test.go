package cliflags

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pki is a throwaway CA with a server and a client certificate, as PEM
// files in a test's temporary directory.
type pki struct {
	dir                   string
	caFile                string
	serverCert            tls.Certificate
	clientCert, clientKey string
	pool                  *x509.CertPool
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir(), pool: x509.NewCertPool()}
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "errtrail test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	p.pool.AddCert(ca)
	p.caFile = p.write(t, "ca.pem", "CERTIFICATE", caDER)

	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		k := newKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			DNSNames:     []string{cn},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	sDER, sKey := leaf(2, "clickhouse.errtrail.test", x509.ExtKeyUsageServerAuth)
	p.serverCert = tls.Certificate{Certificate: [][]byte{sDER}, PrivateKey: sKey}
	cDER, cKey := leaf(3, "alerter", x509.ExtKeyUsageClientAuth)
	p.clientCert = p.write(t, "client.pem", "CERTIFICATE", cDER)
	kDER, err := x509.MarshalECPrivateKey(cKey)
	if err != nil {
		t.Fatal(err)
	}
	p.clientKey = p.write(t, "client-key.pem", "EC PRIVATE KEY", kDER)
	return p
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (p *pki) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// handshake runs a TLS server that requires a client certificate signed by
// the CA and returns the client's handshake error.
func (p *pki) handshake(t *testing.T, client *tls.Config) error {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{p.serverCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.pool,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.(*tls.Conn).Handshake()
		c.Read(make([]byte, 1))
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), client)
	if err != nil {
		return err
	}
	defer c.Close()
	// TLS 1.3 reports a rejected client certificate on the first read.
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	_, err = c.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return nil
	}
	return err
}

// The TLS flags, given by their variables, build a config that verifies the
// server against the CA file and presents the client certificate.
func TestTLSConfigFromFiles(t *testing.T) {
	p := newPKI(t)
	t.Setenv("T_CH_TLS", "true")
	t.Setenv("T_CH_TLS_CA_FILE", p.caFile)
	t.Setenv("T_CH_TLS_CERT_FILE", p.clientCert)
	t.Setenv("T_CH_TLS_KEY_FILE", p.clientKey)
	t.Setenv("T_CH_TLS_SERVER_NAME", "clickhouse.errtrail.test")
	f, out := newSet()
	tf := f.TLS("clickhouse", "T_CH", "ClickHouse")
	if err := f.FlagSet().Parse(nil); err != nil {
		t.Fatal(err)
	}
	c, err := tf.Config()
	if err != nil {
		t.Fatal(err)
	}
	if c == nil || c.MinVersion != tls.VersionTLS12 || c.RootCAs == nil || len(c.Certificates) != 1 || c.ServerName != "clickhouse.errtrail.test" || c.InsecureSkipVerify {
		t.Fatalf("config %+v", c)
	}
	if err := p.handshake(t, c); err != nil {
		t.Errorf("handshake with the CA and client certificate: %v", err)
	}

	// Without the client certificate the server refuses; with another
	// server name the client does.
	noCert := c.Clone()
	noCert.Certificates = nil
	if err := p.handshake(t, noCert); err == nil {
		t.Error("handshake without a client certificate succeeded")
	}
	wrongName := c.Clone()
	wrongName.ServerName = "other.errtrail.test"
	if err := p.handshake(t, wrongName); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("handshake with a wrong server name: %v", err)
	}

	f.FlagSet().PrintDefaults()
	for _, want := range []string{"-clickhouse.tls.ca-file", "[env T_CH_TLS_CA_FILE]", "-clickhouse.tls.insecure-skip-verify", "[env T_CH_TLS_INSECURE_SKIP_VERIFY]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("usage lacks %q", want)
		}
	}
}

func TestTLSConfigErrors(t *testing.T) {
	p := newPKI(t)
	notPEM := filepath.Join(p.dir, "not.pem")
	os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600)
	for _, tc := range []struct {
		name string
		args []string
		want string // in the error; empty: no error and a nil config
	}{
		{"off", []string{"-ch.tls.ca-file", notPEM}, ""},
		{"CA file without a certificate", []string{"-ch.tls", "-ch.tls.ca-file", notPEM}, "no certificate found"},
		{"missing CA file", []string{"-ch.tls", "-ch.tls.ca-file", filepath.Join(p.dir, "absent.pem")}, "absent.pem"},
		{"certificate without key", []string{"-ch.tls", "-ch.tls.cert-file", p.clientCert}, "open"},
	} {
		f, _ := newSet()
		tf := f.TLS("ch", "", "ClickHouse")
		if err := f.FlagSet().Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		c, err := tf.Config()
		switch {
		case tc.want == "" && (err != nil || c != nil):
			t.Errorf("%s: config %v, error %v; want neither", tc.name, c, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v; want one containing %q", tc.name, err, tc.want)
		}
	}
}
