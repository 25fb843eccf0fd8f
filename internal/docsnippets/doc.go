// Package docsnippets holds the checks that what a newcomer copies from
// the documentation works: every ```go block of README.md, docs/*.md and
// examples/*/README.md compiles and passes go vet against this repository
// (its tests), in a module of its own that takes errtrail as the docs say
// (a replace directive, then go mod tidy).
//
// A block is either a whole program (it has a package clause) or a
// fragment: a block whose first line is
//
//	// fragment(pub *kafkapub.Publisher, target string)
//
// is the body of a function with those parameters that returns an error;
// the check wraps it so and imports the packages it names (emit, grpc,
// net/http, ...: Imports). Any other ```go block fails the check: mark it,
// or make it a program. Compile errors point at the block's lines in the
// Markdown file (//line directives).
//
// The package also checks that go.mod's go line is the lowest release the
// dependencies allow, so a module that imports emit is not held to more.
package docsnippets
