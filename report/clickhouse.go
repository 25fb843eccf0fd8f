package report

import (
	"context"
	"errors"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// ClickHouse builds reports from errtrail's tables. It needs only read access.
type ClickHouse struct {
	Conn     driver.Conn
	Database string // default "errtrail"
}

// Report implements Reporter.
func (c *ClickHouse) Report(ctx context.Context, agent string, from, to time.Time) (*Report, error) {
	return nil, errors.New("report: not implemented yet")
}
