package cmdkit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Main runs a command: run gets a context that ends on SIGINT or SIGTERM,
// the arguments after the command's name, stdout and stderr, and returns
// the exit status, with which the process exits.
func Main(run func(ctx context.Context, args []string, stdout, stderr io.Writer) int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Shown is an error the flag package has already printed, with the usage
// (a flag not defined, a value it cannot parse).
type Shown struct{ Err error }

func (e Shown) Error() string { return e.Err.Error() }
func (e Shown) Unwrap() error { return e.Err }

// ExitCode is the status of a command whose settings could not be read:
// 0 after --help (flag.ErrHelp), 2 after an error, which is printed to
// stderr as "name: err" unless the flag package did already (Shown). ok is
// true when err is nil: the command goes on.
func ExitCode(name string, err error, stderr io.Writer) (code int, ok bool) {
	var shown Shown
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		return 0, false
	case errors.As(err, &shown):
		return 2, false
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return 2, false
}
