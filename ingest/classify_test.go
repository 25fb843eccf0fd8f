package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
)

func TestClassify(t *testing.T) {
	ex := func(code int32) error {
		return fmt.Errorf("insert: %w", &clickhouse.Exception{Code: code, Message: "x"})
	}
	for _, tc := range []struct {
		name string
		err  error
		want ErrClass
	}{
		{"unknown table", ex(60), ClassSchema},
		{"no such column", ex(16), ClassSchema},
		{"type mismatch", ex(53), ClassSchema},
		{"unknown database", ex(81), ClassSchema},
		{"unknown identifier in a view", ex(47), ClassSchema},
		{"too many parts", ex(252), ClassTooManyParts},
		{"memory limit", ex(241), ClassResources},
		{"server timeout", ex(159), ClassTimeout},
		{"wrong password", ex(193), ClassAuth},
		{"unlisted server code", ex(999999), ClassServer},
		{"refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, ClassNetwork},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), ClassNetwork},
		{"eof", fmt.Errorf("read packet: %w", io.EOF), ClassNetwork},
		{"deadline", fmt.Errorf("send: %w", context.DeadlineExceeded), ClassTimeout},
		{"acquire timeout", clickhouse.ErrAcquireConnTimeout, ClassTimeout},
		{"driver conversion", &column.ColumnConverterError{Op: "Append", To: "UInt64", From: "string"}, ClassSchema},
		{"our column buffers", &columnError{column: "attempt", err: errors.New("bad")}, ClassSchema},
		{"anything else", errors.New("something odd"), ClassServer},
	} {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("%s: Classify(%v) = %s; want %s", tc.name, tc.err, got, tc.want)
		}
	}
	for _, c := range ErrClasses {
		if c.Permanent() != (c == ClassSchema || c == ClassAuth) {
			t.Errorf("%s.Permanent() = %v", c, c.Permanent())
		}
	}
	if CodeName(252) != "TOO_MANY_PARTS" || CodeName(1) != "" {
		t.Errorf("CodeName: got %q, %q", CodeName(252), CodeName(1))
	}
}
