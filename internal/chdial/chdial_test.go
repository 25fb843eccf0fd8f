package chdial

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// listen accepts connections and never reads from them, like a frozen
// server; the kernel's buffers fill and writes block.
func listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for {
			select {
			case c := <-held:
				c.Close()
			default:
				return
			}
		}
	})
	return ln.Addr().String()
}

func TestWriteToAServerThatStopsReadingTimesOut(t *testing.T) {
	addr := listen(t)
	d := &Dialer{Timeout: 5 * time.Second, WriteTimeout: 300 * time.Millisecond}
	c, err := d.DialContext(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	writeUntilDeadline(t, c, "a write to a server that stopped reading was still blocked after a minute")
}

func TestEarlierDeadlineOfTheUserWins(t *testing.T) {
	addr := listen(t)
	d := &Dialer{Timeout: 5 * time.Second, WriteTimeout: time.Hour}
	c, err := d.DialContext(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(300 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	writeUntilDeadline(t, c, "the deadline set on the connection did not bound its writes")
}

// writeUntilDeadline writes to c, whose peer never reads, until a write
// fails; the failure must be a deadline within a minute, else it fails the
// test with stuck.
func writeUntilDeadline(t *testing.T, c net.Conn, stuck string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := c.Write(buf); err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("write failed with %v; want a deadline error", err)
		}
	case <-time.After(time.Minute):
		t.Fatal(stuck)
	}
}

func TestWritesWithinTheTimeoutSucceed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		n := 0
		buf := make([]byte, 64<<10)
		for {
			k, err := c.Read(buf)
			n += k
			if err != nil {
				got <- n
				return
			}
		}
	}()
	d := &Dialer{Timeout: 5 * time.Second, WriteTimeout: 10 * time.Second}
	c, err := d.DialContext(context.Background(), ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 64; i++ {
		if _, err := c.Write(make([]byte, 1<<20)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	c.Close()
	if n := <-got; n != 64<<20 {
		t.Fatalf("server read %d bytes; want %d", n, 64<<20)
	}
}

func TestDialRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	d := &Dialer{Timeout: 2 * time.Second, WriteTimeout: time.Second}
	if _, err := d.DialContext(context.Background(), addr); err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
}

func TestTLSVerifiesTheServerByItsAddress(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	addr := strings.TrimPrefix(srv.URL, "https://")

	d := &Dialer{Timeout: 5 * time.Second, WriteTimeout: 5 * time.Second, TLS: &tls.Config{RootCAs: pool}}
	c, err := d.DialContext(context.Background(), addr)
	if err != nil {
		t.Fatalf("TLS dial with the server's CA: %v", err)
	}
	if _, err := io.WriteString(c, "GET / HTTP/1.0\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(c)
	c.Close()
	if !strings.HasSuffix(string(body), "ok") {
		t.Fatalf("reply over TLS: %q", body)
	}

	untrusted := &Dialer{Timeout: 5 * time.Second, TLS: &tls.Config{}}
	if c, err := untrusted.DialContext(context.Background(), addr); err == nil {
		c.Close()
		t.Fatal("TLS dial without the server's CA succeeded; want a verification error")
	}
}
