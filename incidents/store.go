package incidents

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Reader answers the episodes a filter selects (Store, or a test's own).
type Reader interface {
	Incidents(ctx context.Context, f Filter) ([]Incident, error)
}

// Store is the Reader of one database's incidents table.
type Store struct {
	Conn     driver.Conn
	Database string // default "errtrail"
}

// Incidents implements Reader with Read.
func (s Store) Incidents(ctx context.Context, f Filter) ([]Incident, error) {
	db := s.Database
	if db == "" {
		db = "errtrail"
	}
	return Read(ctx, s.Conn, db, f)
}
