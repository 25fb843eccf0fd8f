package docsnippets

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/errtrail/errtrail/internal/testenv"
)

// docFiles are the Markdown files whose ```go blocks are checked, relative
// to the repository's root.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"README.md", "docs/*.md", "examples/*/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, rel)
		}
	}
	return files
}

// goCmd runs the go command in dir, with the module and toolchain of dir
// alone (no workspace, no toolchain switch).
func goCmd(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// check takes the snippets into a module of their own, as docs/emit.md
// tells a newcomer to (replace directive to root, go mod tidy), and runs
// go vet and go build on them. The output names the Markdown lines of
// any error.
func check(t *testing.T, root string, snippets []Snippet) (string, error) {
	t.Helper()
	dir := t.TempDir()
	gomod := "module example.com/snippets\n\ngo 1.26.0\n\nreplace github.com/errtrail/errtrail => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	// The repository's go.sum holds every hash tidy needs: no download
	// when the module cache has them.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, s := range snippets {
		if !filepath.IsAbs(s.File) {
			s.File = filepath.Join(root, s.File) // errors name root/docs/emit.md:NN
		}
		src, err := Program(s)
		if err != nil {
			return "", err
		}
		pkg := filepath.Join(dir, fmt.Sprintf("s%02d", i))
		if err := os.Mkdir(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"mod", "tidy"}, {"vet", "./..."}, {"build", "-o", os.DevNull, "./..."}} {
		if out, err := goCmd(dir, args...); err != nil {
			return out, fmt.Errorf("go %s: %v", strings.Join(args, " "), err)
		}
	}
	return "", nil
}

// TestDocSnippetsCompile: every ```go block of the docs compiles and
// passes go vet, taken as a newcomer takes the module (replace, tidy).
// Fails when one breaks, naming the Markdown line.
func TestDocSnippetsCompile(t *testing.T) {
	root := testenv.ModuleRoot(t)
	var all []Snippet
	for _, f := range docFiles(t, root) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		s, err := Extract(f, string(b))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, s...)
	}
	// docs/emit.md's three (an agent, a client, gRPC) at least: a glob
	// that finds nothing must not pass.
	if n := countIn(all, "docs/emit.md"); n < 3 {
		t.Fatalf("%d ```go blocks in docs/emit.md, want at least 3", n)
	}
	if out, err := check(t, root, all); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%d snippets compiled and vetted", len(all))
}

func countIn(s []Snippet, file string) int {
	n := 0
	for _, x := range s {
		if x.File == file {
			n++
		}
	}
	return n
}

// TestDocSnippetsBreakFails: the check fails for a snippet that does not
// compile (an undefined ctx, as docs/emit.md's first snippet once had),
// for one go vet rejects, and for an unmarked fragment, naming the
// Markdown line each time; it passes the same snippets fixed.
func TestDocSnippetsBreakFails(t *testing.T) {
	root := testenv.ModuleRoot(t)
	for _, c := range []struct{ name, md, want string }{
		{"undefined", "# x\n\n```go\n// fragment(pub *kafkapub.Publisher)\ndefer pub.Close(ctx)\n```\n", "broken.md:5"},
		{"vet", "```go\npackage main\n\nimport \"fmt\"\n\nfunc main() { fmt.Printf(\"%d\\n\", \"x\") }\n```\n", "broken.md:6"},
		{"unmarked", "text\n```go\npub.Close(ctx)\n```\n", "broken.md:3"},
	} {
		s, err := Extract("broken.md", c.md)
		if err != nil {
			t.Fatal(err)
		}
		out, err := check(t, root, s)
		if err == nil {
			t.Fatalf("%s: a broken snippet passed", c.name)
		}
		if !strings.Contains(out+err.Error(), c.want) {
			t.Fatalf("%s: the failure does not name %s: %v\n%s", c.name, c.want, err, out)
		}
	}
	fixed := []Snippet{
		{File: "fixed.md", Line: 4, Code: "// fragment(ctx context.Context, pub *kafkapub.Publisher)\nif err := pub.Close(ctx); err != nil {\n\treturn err\n}\n"},
		{File: "fixed.md", Line: 9, Code: "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Printf(\"%s\\n\", \"x\") }\n"},
	}
	if out, err := check(t, root, fixed); err != nil {
		t.Fatalf("fixed snippets: %v\n%s", err, out)
	}
}

// TestUnitExtract (pure): blocks of other languages are not taken, lines
// are counted from 1, an open block is an error.
func TestUnitExtract(t *testing.T) {
	md := "# t\n```sh\ngo run .\n```\n\n```go\npackage main\n```\n  ```go\nx := 1\n  ```\n"
	s, err := Extract("a.md", md)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || s[0].Line != 7 || s[0].Code != "package main\n" || s[1].Line != 10 || s[1].Code != "x := 1\n" {
		t.Fatalf("got %+v", s)
	}
	if _, err := Extract("a.md", "```go\npackage main\n"); err == nil || !strings.Contains(err.Error(), "a.md:1") {
		t.Fatalf("open block: %v", err)
	}
}

// TestUnitProgram (pure): a fragment is wrapped with the imports it names
// and nothing else; a block that is neither is refused.
func TestUnitProgram(t *testing.T) {
	src, err := Program(Snippet{File: "d.md", Line: 3, Code: "// fragment(pub *kafkapub.Publisher, lis net.Listener)\nsrv := grpc.NewServer()\n_ = pub\nreturn srv.Serve(lis)\n"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`import "github.com/errtrail/errtrail/emit/kafkapub"`, `import "google.golang.org/grpc"`, `import "net"`,
		"func fragment(pub *kafkapub.Publisher, lis net.Listener) error {\n//line d.md:4\n"} {
		if !strings.Contains(src, want) {
			t.Errorf("wrapped fragment lacks %q:\n%s", want, src)
		}
	}
	if strings.Contains(src, `"net/http"`) || strings.Contains(src, `"context"`) || strings.Contains(src, `errtrail/emit"`) {
		t.Errorf("wrapped fragment imports what it does not name:\n%s", src)
	}
	if _, err := Program(Snippet{File: "d.md", Line: 9, Code: "x := 1\n"}); err == nil || !strings.Contains(err.Error(), "d.md:9") {
		t.Fatalf("unmarked block: %v", err)
	}
}
