package cmdkit

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errtrail/errtrail/internal/chdial"
	"github.com/errtrail/errtrail/internal/cliflags"
	"github.com/errtrail/errtrail/schema"
)

// The defaults of the ClickHouse flag group and of Open, the same for
// every command.
const (
	DefaultClickHouseAddr = "127.0.0.1:19000" // the local stack's native port
	DefaultClickHouseUser = "default"
	// DefaultDialTimeout is --clickhouse.dial-timeout's default: it bounds
	// a connection's TCP connect, TLS handshake and the protocol's hello.
	DefaultDialTimeout = 10 * time.Second
)

// ClickHouseHelp are the parts of the group's help that say what this
// command needs: of the database (ingest creates it; the others read it)
// and of the user (its grants).
type ClickHouseHelp struct {
	Database string // default "database holding errtrail's tables"
	User     string // default "ClickHouse user"
}

// ClickHouse is the --clickhouse.* flag group: --clickhouse.addr,
// .database, .user, .password, .dial-timeout and the TLS flags
// (cliflags.TLS). Check
// fills Addrs and TLSConfig.
type ClickHouse struct {
	Addr     *string // --clickhouse.addr, as given (comma-separated)
	Database *string // --clickhouse.database
	User     *string // --clickhouse.user
	password *string
	tls      cliflags.TLS
	// DialTimeout is --clickhouse.dial-timeout.
	DialTimeout *time.Duration

	Addrs     []string    // --clickhouse.addr, split
	TLSConfig *tls.Config // nil without TLS
}

// AddClickHouse registers the group on f with errtrail's defaults.
// envPrefix, if not empty, names their fixed variables (ingest's
// "ERRTRAIL_": ERRTRAIL_CLICKHOUSE_ADDR, ...); else the command adds its
// own with Flags.Env.
func AddClickHouse(f *cliflags.Flags, envPrefix string, help ClickHouseHelp) *ClickHouse {
	if help.Database == "" {
		help.Database = "database holding errtrail's tables"
	}
	if help.User == "" {
		help.User = "ClickHouse user"
	}
	tlsPrefix := ""
	if envPrefix != "" {
		tlsPrefix = envPrefix + "CLICKHOUSE"
	}
	return &ClickHouse{
		Addr:     f.String("clickhouse.addr", envKey(envPrefix, "clickhouse.addr"), DefaultClickHouseAddr, "ClickHouse native-protocol addresses host:port, comma-separated"),
		Database: f.String("clickhouse.database", envKey(envPrefix, "clickhouse.database"), schema.DefaultDatabase, help.Database),
		User:     f.String("clickhouse.user", envKey(envPrefix, "clickhouse.user"), DefaultClickHouseUser, help.User),
		password: f.Secret("clickhouse.password", envKey(envPrefix, "clickhouse.password"), "ClickHouse password (never logged; prefer the environment)"),
		tls:      f.TLS("clickhouse", tlsPrefix, "ClickHouse"),
		DialTimeout: f.Duration("clickhouse.dial-timeout", envKey(envPrefix, "clickhouse.dial-timeout"), DefaultDialTimeout,
			"bound of a new ClickHouse connection's connect, TLS handshake and hello"),
	}
}

// envKey is the fixed variable of flag name under prefix, or "" without
// a prefix.
func envKey(prefix, name string) string {
	if prefix == "" {
		return ""
	}
	return prefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(name))
}

// Check reports settings that can never work (no address, a database
// name that cannot be formatted into SQL, unreadable TLS files), so that
// they stop the command at start instead of failing every query.
func (c *ClickHouse) Check() error {
	if c.Addrs = cliflags.SplitList(*c.Addr); len(c.Addrs) == 0 {
		return errors.New("--clickhouse.addr names no address")
	}
	if err := schema.ValidDatabase(*c.Database); err != nil {
		return err
	}
	if *c.DialTimeout <= 0 {
		return errors.New("--clickhouse.dial-timeout must be above 0")
	}
	var err error
	if c.TLSConfig, err = c.tls.Config(); err != nil {
		return fmt.Errorf("clickhouse TLS: %w", err)
	}
	return nil
}

// Password is --clickhouse.password: never log or print it.
func (c *ClickHouse) Password() *string { return c.password }

// Pool are the settings of one pool that are the command's to choose.
type Pool struct {
	// Addrs, if not empty, replaces --clickhouse.addr (another replica
	// for reports, one shard of a cluster).
	Addrs []string
	// Timeout bounds the wait for one answer and each write (chdial):
	// the command's query or insert timeout.
	Timeout time.Duration
	// MaxOpen bounds the pool's connections (and idle ones); 0: the
	// driver's default, 10.
	MaxOpen int
	// Compress sends blocks LZ4-compressed (ingest's inserts).
	Compress bool
	// OwnDatabase logs in to --clickhouse.database instead of "default":
	// a user allowed errtrail's database only (users.xml allow_databases
	// on 18.16, GRANTs on errtrail.* today) is refused a session in
	// "default". Not for ingest, whose migrate may create the database.
	OwnDatabase bool
}

// Open opens a pool on the checked flags. Opening does not dial: a server
// that cannot be reached fails the first query. It logs in to the
// database "default" (every query names errtrail's database, which
// ingest migrate may have yet to create), or to errtrail's own with
// Pool.OwnDatabase. chdial does TLS and bounds every
// write: the driver sends the blocks of an INSERT with no deadline of its
// own.
func (c *ClickHouse) Open(p Pool) (driver.Conn, error) {
	addrs := p.Addrs
	if len(addrs) == 0 {
		addrs = c.Addrs
	}
	if len(addrs) == 0 {
		return nil, errors.New("cmdkit: ClickHouse.Open before Check, or no address")
	}
	login := "default"
	if p.OwnDatabase {
		login = *c.Database
	}
	o := &clickhouse.Options{
		Addr:         addrs,
		Protocol:     clickhouse.Native,
		Auth:         clickhouse.Auth{Database: login, Username: *c.User, Password: *c.password},
		DialContext:  (&chdial.Dialer{Timeout: *c.DialTimeout, WriteTimeout: p.Timeout, TLS: c.TLSConfig}).DialContext,
		DialTimeout:  *c.DialTimeout,
		ReadTimeout:  p.Timeout,
		MaxOpenConns: p.MaxOpen,
		MaxIdleConns: p.MaxOpen,
	}
	if p.Compress {
		o.Compression = &clickhouse.Compression{Method: clickhouse.CompressionLZ4}
	}
	return clickhouse.Open(o)
}
