package parse

import (
	"bytes"
	"strings"
)

// This file decodes the A2A v0.3 legacy REST bodies of a2a-java, whose
// body may not even be valid JSON.

// javaErrorName turns a Java class name such as
// io.a2a.spec.TaskNotFoundError into the reason form TASK_NOT_FOUND.
func (d *Decoder) javaErrorName(fqcn string) string {
	name := fqcn
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.LastIndexByte(name, '$'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimSuffix(name, "Error")
	name = strings.TrimSuffix(name, "Exception")
	if name == "" {
		return ""
	}
	ar := &d.sc.ar
	ar.grow(2 * len(name))
	start := len(ar.buf)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			if i > 0 && (name[i-1] >= 'a' && name[i-1] <= 'z' || name[i-1] >= '0' && name[i-1] <= '9') {
				ar.buf = append(ar.buf, '_')
			}
			ar.buf = append(ar.buf, c)
		} else if c >= 'a' && c <= 'z' {
			ar.buf = append(ar.buf, c-'a'+'A')
		} else if c >= '0' && c <= '9' || c == '_' {
			ar.buf = append(ar.buf, c)
		}
	}
	s := bytesToString(ar.buf[start:])
	// Legacy names for the same errors.
	switch s {
	case "AUTHENTICATED_EXTENDED_CARD_NOT_CONFIGURED":
		return "EXTENDED_AGENT_CARD_NOT_CONFIGURED"
	case "JSONPARSE", "JSON_PARSE":
		return "PARSE_ERROR"
	case "INVALID_PARAMS", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INTERNAL":
	}
	return s
}

// legacyJavaInvalid reads the a2a-java v0.3 body built by string
// concatenation without escaping, which may not be valid JSON:
// {"error":"<FQCN>","message":"<unescaped text>"}.
func (d *Decoder) legacyJavaInvalid(body []byte, rec *Record) *DecodeError {
	rest := body[len(`{"error":"`):]
	end := bytes.IndexByte(rest, '"')
	if end <= 0 {
		return errAt(ErrInvalidJSON, "reply.body", 0, "reply body is not valid JSON")
	}
	fqcn := rest[:end]
	for _, c := range fqcn {
		if !(c == '.' || c == '$' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return errAt(ErrInvalidJSON, "reply.body", 0, "reply body is not valid JSON")
		}
	}
	rec.Envelope = EnvLegacyFlat
	rec.Code = d.javaErrorName(bytesToString(fqcn))
	if i := bytes.Index(rest, []byte(`"message":"`)); i >= 0 {
		m := rest[i+len(`"message":"`):]
		if j := bytes.LastIndex(m, []byte(`"}`)); j >= 0 {
			m = m[:j]
		}
		rec.Message = d.redactStr(d.sc.ar.save(m))
	}
	return nil
}
