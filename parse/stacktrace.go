package parse

import "strings"

// Stack-trace detection for seed 000's "Never echo customer values,
// credentials or internal stack traces." (echoes_stack_trace). A text holds
// a stack trace when it holds one frame in the form a common runtime
// prints it:
//
//	Java, Kotlin, Scala   at com.example.Lead.submit(Lead.java:42)
//	                      at java.base/java.lang.Thread.run(Native Method)
//	JavaScript (V8)       at handler (/app/src/index.js:10:15)
//	                      at /app/src/index.js:10:15
//	.NET                  at Dealer.Leads.Submit(Lead lead) in C:\src\Leads.cs:line 42
//	Rust                  at /rustc/…/library/std/src/panicking.rs:645:5
//	Python                File "/app/handlers.py", line 12, in submit
//	                      Traceback (most recent call last)
//	Go                    goroutine 1 [running]:
//	                      /app/main.go:42 +0x1d
//	Ruby                  /app/lead.rb:12:in `submit'
//	PHP                   #0 /var/www/Lead.php(42): App\Lead->submit()
//
// A file name counts only with a source extension and a line number, so
// "failed at api.example.com (port 443)" or "see RFC 9110 (section 15)" is
// no frame. The scan is one pass; each candidate looks ahead a bounded span
// (frameLook), so the time stays linear in the text.

const frameLook = 512

func looksStackTrace(s string) bool {
	if len(s) < 10 || !mayHoldFrame(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'a':
			if atFrame(s, i) {
				return true
			}
		case 'F':
			if hasAt(s, i, `File "`) && pythonFrame(s, i+6) {
				return true
			}
		case 'T':
			if hasAt(s, i, "Traceback (most recent call last)") {
				return true
			}
		case 'g':
			if hasAt(s, i, "goroutine ") && goroutineHeader(s, i+10) {
				return true
			}
		case '.':
			if dotFrame(s, i) {
				return true
			}
		}
	}
	return false
}

// mayHoldFrame is looksStackTrace's first look. Every form has one of
// these bytes ('(' Java, .NET, V8, Traceback, PHP; ':' locations; '"'
// Python; '[' goroutine), and most messages have none. A short text is
// looked at 8 bytes at a time (the last word overlaps the one before it);
// on a long one four vectorised byte searches are cheaper.
func mayHoldFrame(s string) bool {
	if len(s) > 64 {
		return strings.IndexByte(s, '(') >= 0 || strings.IndexByte(s, ':') >= 0 ||
			strings.IndexByte(s, '"') >= 0 || strings.IndexByte(s, '[') >= 0
	}
	if len(s) < 8 {
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '(', ':', '"', '[':
				return true
			}
		}
		return false
	}
	b := stringBytes(s)
	for i := 0; ; i += 8 {
		if i+8 >= len(b) {
			return frameWord(word(b, len(b)-8)) != 0
		}
		if frameWord(word(b, i)) != 0 {
			return true
		}
	}
}

// frameWord returns a mask that is not zero when a byte of the word x is
// '(', ':', '"' or '['. x^c is zero in a byte equal to c, and subtracting 1
// sets the high bit of a zero byte; a byte of 0x80 or more has its high
// bit already, and the &^ x drops it. A borrow runs out of a zero byte
// only, so it can add marks but never make one where no byte matched.
func frameWord(x uint64) uint64 {
	a := x ^ (lsb * '(')
	b := x ^ (lsb * ':')
	c := x ^ (lsb * '"')
	e := x ^ (lsb * '[')
	return ((a - lsb) | (b - lsb) | (c - lsb) | (e - lsb)) &^ x & msb
}

func hasAt(s string, i int, p string) bool {
	return len(s)-i >= len(p) && s[i:i+len(p)] == p
}

// atFrame: "at " after a line start or white space, then a symbol and its
// location in parentheses, or a bare source location with a directory.
func atFrame(s string, i int) bool {
	if !hasAt(s, i, "at ") || (i > 0 && !isWS(s[i-1])) {
		return false
	}
	j := i + 3
	for _, w := range [...]string{"async ", "new "} {
		if hasAt(s, j, w) {
			j += len(w)
		}
	}
	start := j
	for j < len(s) && j-start < frameLook {
		c := s[j]
		if c == ' ' || c == '(' || c == ')' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		j++
	}
	sym := s[start:j]
	if sym == "" {
		return false
	}
	if j >= len(s) || s[j] != '(' {
		if hasAt(s, j, " (") {
			j++
		} else {
			// A bare location (V8's anonymous frames, Rust's "at" lines):
			// only with a directory, so "error at main.go:12" is no frame.
			return sourceLocation(trimFrameEnd(sym)) && containsAny(sym, "/\\")
		}
	}
	// The parenthesised part: a source location, Java's markers, or .NET's
	// parameter list followed by " in <file>:line N".
	k := j + 1
	for k < len(s) && k-j < frameLook && s[k] != ')' && s[k] != '\n' {
		k++
	}
	if k >= len(s) || s[k] != ')' {
		return false
	}
	inner := s[j+1 : k]
	if sourceLocation(inner) {
		return true
	}
	if (inner == "Native Method" || inner == "Unknown Source") && containsAny(sym, ".") {
		return true
	}
	if hasAt(s, k+1, " in ") {
		for m := k + 5; m < len(s) && m-k < frameLook && s[m] != '\n'; m++ {
			if hasAt(s, m, ":line ") && m+6 < len(s) && isDigit(s[m+6]) {
				return true
			}
		}
	}
	return false
}

// trimFrameEnd drops the punctuation a sentence may put after a location.
func trimFrameEnd(s string) string {
	for len(s) > 0 && (s[len(s)-1] == ',' || s[len(s)-1] == ';' || s[len(s)-1] == '.') {
		s = s[:len(s)-1]
	}
	return s
}

// sourceLocation: file.ext:LINE or file.ext:LINE:COL with a source file
// extension, or a Node.js internal module (node:internal/…:LINE:COL).
func sourceLocation(s string) bool {
	e := len(s)
	for pass := 0; pass < 2; pass++ { // LINE, then LINE:COL
		d := e
		for d > 0 && isDigit(s[d-1]) {
			d--
		}
		if d == e || d == 0 || s[d-1] != ':' {
			break
		}
		file := s[:d-1]
		if hasAt(file, 0, "node:") || sourceExt(file) {
			return true
		}
		e = d - 1
	}
	return false
}

// sourceExt reports whether a file name ends in a programming language's
// source extension.
func sourceExt(file string) bool {
	dot := -1
	for i := len(file) - 1; i >= 0 && len(file)-i <= 8; i-- {
		if file[i] == '.' {
			dot = i
			break
		}
		if file[i] == '/' || file[i] == '\\' {
			return false
		}
	}
	if dot <= 0 {
		return false
	}
	switch file[dot+1:] {
	case "java", "kt", "scala", "groovy", "clj", "js", "mjs", "cjs", "ts", "tsx", "jsx", "py", "go", "rb", "php",
		"cs", "vb", "fs", "rs", "c", "cc", "cpp", "cxx", "h", "hpp", "swift", "dart", "ex", "exs", "erl":
		return true
	}
	return false
}

// pythonFrame: File "<path>", line N
func pythonFrame(s string, i int) bool {
	for k := i; k < len(s) && k-i < frameLook && s[k] != '\n'; k++ {
		if s[k] == '"' {
			return k > i && hasAt(s, k+1, ", line ") && k+8 < len(s) && isDigit(s[k+8])
		}
	}
	return false
}

// goroutineHeader: goroutine N [state]
func goroutineHeader(s string, i int) bool {
	k := i
	for k < len(s) && isDigit(s[k]) {
		k++
	}
	return k > i && hasAt(s, k, " [")
}

// dotFrame looks at a '.' for Go's "file.go:N +0x…", Ruby's
// "file.rb:N:in " and PHP's "file.php(N): ".
func dotFrame(s string, i int) bool {
	switch {
	case hasAt(s, i, ".go:"):
		k := digitsEnd(s, i+4)
		return k > i+4 && hasAt(s, k, " +0x")
	case hasAt(s, i, ".rb:"):
		k := digitsEnd(s, i+4)
		return k > i+4 && hasAt(s, k, ":in ")
	case hasAt(s, i, ".php("):
		k := digitsEnd(s, i+5)
		return k > i+5 && hasAt(s, k, "): ")
	}
	return false
}

func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func containsAny(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		for j := 0; j < len(chars); j++ {
			if s[i] == chars[j] {
				return true
			}
		}
	}
	return false
}
