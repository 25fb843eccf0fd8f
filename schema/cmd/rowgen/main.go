// Command rowgen writes the code derived from schema.RowColumns
// (internal/rowgen) into the repository whose root is -root:
//
//	go generate ./schema     # runs: go run ./cmd/rowgen -root ..
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/errtrail/errtrail/internal/rowgen"
)

func main() {
	root := flag.String("root", ".", "the repository's root directory")
	flag.Parse()
	files, err := rowgen.Files()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for path, src := range files {
		if err := os.WriteFile(filepath.Join(*root, filepath.FromSlash(path)), src, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
