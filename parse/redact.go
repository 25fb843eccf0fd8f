package parse

import "github.com/errtrail/errtrail/redact"

// Redaction: no credential or customer value may reach a record, a log line
// or a metric. The rules live in package redact, shared with the ingester's
// dead-letter path and the emitters; this file applies them to the decoder's
// strings. Message texts and violation descriptions get the text pass as they
// are decoded (redactStr); every other string of a Record is checked by what
// it is once the record is complete (sanitize.go).

// redactStr returns s with secrets replaced; the result lives in the arena
// when something was replaced. It sets d.sc.echoed when it replaced anything.
// Every text pass of a decode goes through the Decoder's Redactor, whose
// Work counts them (the tests hold it linear in the message's length).
func (d *Decoder) redactStr(s string) string {
	if s == "" {
		return s
	}
	if !d.sc.stack && looksStackTrace(s) {
		d.sc.stack = true
	}
	out, changed := d.rd.AppendText(d.sc.tmp[:0], s)
	d.sc.tmp = out[:0]
	if !changed {
		return s
	}
	d.sc.echoed = true
	return d.sc.ar.save(out)
}

// scanText checks a text the reply carries but the record does not keep
// (a details.errors[] explanation, a hint, the second copy of a message)
// the way redactStr checks a kept one: it sets d.sc.echoed when redaction
// would replace something and d.sc.stack when it holds a stack trace.
// Seed 000: "Never echo customer values, credentials or internal stack
// traces" holds for every text the caller reads.
func (d *Decoder) scanText(s string) {
	if plainWord(s) {
		return
	}
	if !d.sc.stack && looksStackTrace(s) {
		d.sc.stack = true
	}
	if d.sc.echoed {
		return // one echo is the finding; the text is not kept
	}
	out, changed := d.rd.AppendText(d.sc.tmp[:0], s)
	d.sc.tmp = out[:0]
	d.sc.echoed = changed
}

// RedactString returns s with credentials and customer values replaced by
// placeholders (redact.Text).
func RedactString(s string) string { return redact.Text(s) }

// RedactRaw appends to dst the first max bytes of b after redaction
// (redact.Raw): credential headers dropped, the text pass applied, invalid
// UTF-8 and control bytes replaced.
func RedactRaw(dst, b []byte, max int) []byte { return redact.Raw(dst, b, max) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// equalFoldASCII compares ASCII case-insensitively (header names, keywords);
// cheaper than strings.EqualFold, which handles all of Unicode.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	if a == b { // header names usually arrive in the canonical case
		return true
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z' {
			return false
		}
	}
	return true
}

// scanTexts scans every string inside v (an aap.error's details) with
// scanText, to a bounded depth. Field paths (instanceLocation) are
// structure, not text, and the error id has its own rule.
func (d *Decoder) scanTexts(v jval, depth int) {
	switch v.kind {
	case jString:
		d.scanText(d.sc.ar.str(v))
	case jObject:
		if depth > 4 {
			return
		}
		it := v.object()
		for {
			k, x, ok := it.next()
			if !ok {
				return
			}
			switch string(k) {
			case "instanceLocation", "@type", "error_id":
				continue
			}
			d.scanTexts(x, depth+1)
		}
	case jArray:
		if depth > 4 {
			return
		}
		it := v.array()
		for {
			x, ok := it.next()
			if !ok {
				return
			}
			d.scanTexts(x, depth+1)
		}
	}
}

// plainWord reports whether s is a short word of letters, '-', '_' and '.'
// (a policy or scope name, a method, "true"): nothing in it is a secret, a
// customer value or a frame (each needs a digit, '@', ':', '(', '=' or
// white space), so the text pass is skipped. "" is plain.
func plainWord(s string) bool {
	if len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

// plainByte marks the bytes of a plain word: ASCII letters, '-', '_', '.'.
var plainByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	t['-'], t['_'], t['.'] = true, true, true
	return
}()
