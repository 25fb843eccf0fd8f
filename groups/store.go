package groups

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Reader answers the groups a filter selects (Store, or a test's own).
type Reader interface {
	Groups(ctx context.Context, f Filter) ([]Group, error)
}

// Store is the Reader of one database's group rollups.
type Store struct {
	Conn     driver.Conn
	Database string // default "errtrail"
}

// Groups implements Reader with Read.
func (s Store) Groups(ctx context.Context, f Filter) ([]Group, error) {
	db := s.Database
	if db == "" {
		db = "errtrail"
	}
	return Read(ctx, s.Conn, db, f)
}
