package main

import (
	"context"
	"fmt"
	"io"
)

// runServe executes `errtrail serve`: the HTTP API and the web pages.
func runServe(ctx context.Context, args []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "errtrail serve: not wired yet")
	return exitFailed
}
