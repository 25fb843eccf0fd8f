package lookup

import (
	"context"
	"errors"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/alerter"
	"github.com/errtrail/errtrail/redact"
)

// Finder answers lookups from errtrail's ClickHouse tables. It needs only
// read access.
type Finder struct {
	Conn     driver.Conn
	Database string           // default "errtrail"
	Redactor *redact.Redactor // hashes an id the way ingest stored it when it could not be kept; nil looks ids up as given only
	Alerter  *alerter.Config  // the verdicts' configuration; nil means alerter.DefaultConfig()
	Now      func() time.Time // default time.Now
}

var errTODO = errors.New("lookup: not implemented yet")

// Story implements Service.
func (f *Finder) Story(ctx context.Context, id string, opt FindOptions) (*Story, error) {
	return nil, errTODO
}

// List implements Service.
func (f *Finder) List(ctx context.Context, q ListQuery) (*Page, error) { return nil, errTODO }

// Ready implements Service: ClickHouse answers and the tables exist.
func (f *Finder) Ready(ctx context.Context) error { return errTODO }
