package cmdkit

import (
	"bytes"
	"context"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/cliflags"
	"github.com/errtrail/errtrail/internal/testenv"
)

func newFlags() (*flag.FlagSet, *cliflags.Flags) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, cliflags.New(fs)
}

// TestClickHouseFlags: the group's defaults are the documented ones
// (127.0.0.1:19000, errtrail, default), the command's help for the user
// and database is used, the fixed variables of an envPrefix are read and
// listed in the help, and without a prefix no variable is read.
func TestClickHouseFlags(t *testing.T) {
	t.Setenv("ERRTRAIL_CLICKHOUSE_ADDR", "ch1:9000,ch2:9000")
	t.Setenv("ERRTRAIL_CLICKHOUSE_PASSWORD", "pw-from-env")
	fs, f := newFlags()
	ch := AddClickHouse(f, "", ClickHouseHelp{User: "read-only user"})
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := f.Resolve(); err != nil {
		t.Fatal(err)
	}
	if err := ch.Check(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ch.Addrs, ",") != DefaultClickHouseAddr || *ch.Database != "errtrail" || *ch.User != "default" ||
		*ch.Password() != "" || ch.TLSConfig != nil {
		t.Errorf("no prefix: addrs %v db %q user %q password set %v; want the defaults, no variable read",
			ch.Addrs, *ch.Database, *ch.User, *ch.Password() != "")
	}
	if *ch.DialTimeout != DefaultDialTimeout {
		t.Errorf("--clickhouse.dial-timeout %v; want the default %v", *ch.DialTimeout, DefaultDialTimeout)
	}
	if u := fs.Lookup("clickhouse.user").Usage; u != "read-only user" {
		t.Errorf("--clickhouse.user help %q", u)
	}

	t.Setenv("ERRTRAIL_CLICKHOUSE_DIAL_TIMEOUT", "90s")
	fs, f = newFlags()
	ch = AddClickHouse(f, "ERRTRAIL_", ClickHouseHelp{})
	if err := fs.Parse([]string{"--clickhouse.database", "flag_db"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Resolve(); err != nil {
		t.Fatal(err)
	}
	if err := ch.Check(); err != nil {
		t.Fatal(err)
	}
	if *ch.DialTimeout != 90*time.Second {
		t.Errorf("--clickhouse.dial-timeout from ERRTRAIL_CLICKHOUSE_DIAL_TIMEOUT: %v; want 1m30s", *ch.DialTimeout)
	}
	if strings.Join(ch.Addrs, " ") != "ch1:9000 ch2:9000" || *ch.Database != "flag_db" || *ch.Password() != "pw-from-env" {
		t.Errorf("ERRTRAIL_ prefix: addrs %v db %q password from env %v", ch.Addrs, *ch.Database, *ch.Password() == "pw-from-env")
	}
	if u := fs.Lookup("clickhouse.addr").Usage; !strings.Contains(u, "ERRTRAIL_CLICKHOUSE_ADDR") {
		t.Errorf("--clickhouse.addr help %q does not list its variable", u)
	}
	var usage bytes.Buffer
	fs.SetOutput(&usage)
	fs.PrintDefaults()
	if strings.Contains(usage.String(), "pw-from-env") {
		t.Error("the help shows the password")
	}
}

// TestClickHouseCheck: settings that can never work are refused at start,
// each with its own reason.
func TestClickHouseCheck(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--clickhouse.addr", " , "}, "names no address"},
		{[]string{"--clickhouse.database", "bad-name"}, "not a plain identifier"},
		{[]string{"--clickhouse.tls", "--clickhouse.tls.ca-file", "/nonexistent/ca.pem"}, "clickhouse TLS"},
		{[]string{"--clickhouse.dial-timeout", "0s"}, "dial-timeout must be above 0"},
	} {
		fs, f := newFlags()
		ch := AddClickHouse(f, "", ClickHouseHelp{})
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := ch.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want an error saying %q", tc.args, err, tc.want)
		}
	}
}

// TestLogFlags: the level and format are checked (a bad one is an error
// naming the flag), and the logger writes what its level lets through in
// its format.
func TestLogFlags(t *testing.T) {
	fs, f := newFlags()
	l := AddLog(f, "")
	if err := fs.Parse([]string{"--log.level", "warn", "--log.format", "json"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	log := l.Logger(&b)
	log.Info("hidden")
	log.Warn("shown")
	if out := b.String(); strings.Contains(out, "hidden") || !strings.Contains(out, `"msg":"shown"`) {
		t.Errorf("warn/json logger wrote %q", out)
	}
	for _, bad := range [][]string{{"--log.level", "loud"}, {"--log.format", "xml"}} {
		fs, f := newFlags()
		l := AddLog(f, "")
		if err := fs.Parse(bad); err != nil {
			t.Fatal(err)
		}
		if err := l.Check(); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: %v; want an error naming %s", bad, err, bad[0])
		}
	}
}

// TestClickHouseOpen: a pool opened from the flags reaches the real
// server and answers, and one with a wrong password is refused by it (the
// credentials are sent).
func TestClickHouseOpen(t *testing.T) {
	addr := testenv.ClickHouse(t)
	for _, tc := range []struct {
		pass string
		ok   bool
	}{{"", true}, {"wrong-password", false}} {
		fs, f := newFlags()
		ch := AddClickHouse(f, "", ClickHouseHelp{})
		if err := fs.Parse([]string{"--clickhouse.addr", addr, "--clickhouse.password", tc.pass}); err != nil {
			t.Fatal(err)
		}
		if err := ch.Check(); err != nil {
			t.Fatal(err)
		}
		conn, err := ch.Open(Pool{Timeout: 10 * time.Second, MaxOpen: 2, Compress: true})
		if err != nil {
			t.Fatal(err)
		}
		var one uint8
		err = conn.QueryRow(context.Background(), "SELECT toUInt8(1)").Scan(&one)
		conn.Close()
		if (err == nil) != tc.ok || (tc.ok && one != 1) {
			t.Errorf("password set %v: %v (answer %d); want ok=%v", tc.pass != "", err, one, tc.ok)
		}
	}
}

// TestKafkaFlags: --kafka.brokers defaults to the local stack's broker,
// reads the prefix's variable, splits and trims the list, and refuses a
// list without a broker.
func TestKafkaFlags(t *testing.T) {
	t.Setenv("ERRTRAIL_KAFKA_BROKERS", " k1:9092 , k2:9092 ")
	fs, f := newFlags()
	k := AddKafka(f, "")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := k.Check(); err != nil || strings.Join(k.List, ",") != DefaultKafkaBrokers {
		t.Errorf("no prefix: %v %v; want the default", k.List, err)
	}
	fs, f = newFlags()
	k = AddKafka(f, "ERRTRAIL_")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := k.Check(); err != nil || strings.Join(k.List, ",") != "k1:9092,k2:9092" {
		t.Errorf("ERRTRAIL_ prefix: %q %v; want k1:9092,k2:9092", k.List, err)
	}
	fs, f = newFlags()
	k = AddKafka(f, "")
	if err := fs.Parse([]string{"--kafka.brokers", " , "}); err != nil {
		t.Fatal(err)
	}
	if err := k.Check(); err == nil || !strings.Contains(err.Error(), "names no broker") {
		t.Errorf("no broker: %v", err)
	}
}
