package ingest

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
)

// ErrClass is the bounded label value that says why an insert failed.
type ErrClass string

const (
	ClassNetwork      ErrClass = "network"        // refused, reset, EOF: the server is away
	ClassTimeout      ErrClass = "timeout"        // our deadline or the server's
	ClassTooManyParts ErrClass = "too_many_parts" // merges are behind; wait
	ClassResources    ErrClass = "resources"      // memory or concurrency limits
	ClassServer       ErrClass = "server"         // any other server exception: retried
	ClassSchema       ErrClass = "schema"         // table/column missing or of another type
	ClassAuth         ErrClass = "auth"           // credentials or permissions
)

// ErrClasses lists every class, for metrics initialisation.
var ErrClasses = []ErrClass{ClassNetwork, ClassTimeout, ClassTooManyParts, ClassResources, ClassServer, ClassSchema, ClassAuth}

// Permanent reports whether retrying cannot help without an operator.
func (c ErrClass) Permanent() bool { return c == ClassSchema || c == ClassAuth }

// chCode is one ClickHouse server error code that ingest treats specially.
type chCode struct {
	code  int32
	name  string
	class ErrClass
}

// chCodes is the table of server codes ingest knows; any other server
// exception is ClassServer (transient). Codes from ClickHouse's
// src/Common/ErrorCodes.cpp.
var chCodes = []chCode{
	{3, "UNEXPECTED_END_OF_FILE", ClassNetwork},
	{8, "THERE_IS_NO_COLUMN", ClassSchema},
	{9, "SIZES_OF_COLUMNS_DOESNT_MATCH", ClassSchema},
	{10, "NOT_FOUND_COLUMN_IN_BLOCK", ClassSchema},
	{16, "NO_SUCH_COLUMN_IN_TABLE", ClassSchema},
	{20, "NUMBER_OF_COLUMNS_DOESNT_MATCH", ClassSchema},
	{44, "ILLEGAL_COLUMN", ClassSchema},
	{47, "UNKNOWN_IDENTIFIER", ClassSchema},
	{50, "UNKNOWN_TYPE", ClassSchema},
	{53, "TYPE_MISMATCH", ClassSchema},
	{60, "UNKNOWN_TABLE", ClassSchema},
	{62, "SYNTAX_ERROR", ClassSchema},
	{70, "CANNOT_CONVERT_TYPE", ClassSchema},
	{81, "UNKNOWN_DATABASE", ClassSchema},
	{159, "TIMEOUT_EXCEEDED", ClassTimeout},
	{164, "READONLY", ClassAuth},
	{192, "UNKNOWN_USER", ClassAuth},
	{193, "WRONG_PASSWORD", ClassAuth},
	{194, "REQUIRED_PASSWORD", ClassAuth},
	{202, "TOO_MANY_SIMULTANEOUS_QUERIES", ClassResources},
	{209, "SOCKET_TIMEOUT", ClassTimeout},
	{210, "NETWORK_ERROR", ClassNetwork},
	{241, "MEMORY_LIMIT_EXCEEDED", ClassResources},
	{252, "TOO_MANY_PARTS", ClassTooManyParts},
	{497, "ACCESS_DENIED", ClassAuth},
	{516, "AUTHENTICATION_FAILED", ClassAuth},
}

// CodeName returns the symbolic name of a ClickHouse error code ingest
// knows, or "".
func CodeName(code int32) string {
	for _, c := range chCodes {
		if c.code == code {
			return c.name
		}
	}
	return ""
}

// Classify tells which class an insert or query error belongs to. Unknown
// errors are transient (ClassServer or ClassNetwork): never skipping data
// wins over stopping early; the retry counter shows the loop.
func Classify(err error) ErrClass {
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		for _, c := range chCodes {
			if c.code == ex.Code {
				return c.class
			}
		}
		return ClassServer
	}
	var colErr *columnError
	var conv *column.ColumnConverterError
	var unsupp *column.UnsupportedColumnTypeError
	if errors.As(err, &colErr) || errors.As(err, &conv) || errors.As(err, &unsupp) {
		return ClassSchema
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, clickhouse.ErrAcquireConnTimeout) {
		return ClassTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ClassTimeout
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ClassNetwork
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return ClassNetwork
	}
	return ClassServer
}
