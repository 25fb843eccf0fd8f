package lookup

import (
	"strings"
	"unicode/utf8"
)

// Bounds of an id a lookup accepts. Every id errtrail stores is 1 to 128
// bytes (longer values were replaced by their hash), but a customer may hold
// the original of a hashed value, so up to MaxIDLen is looked up.
const (
	MinIDLen = 4   // shorter ids match too much to mean anything, except a JSON-RPC id with an agent
	MaxIDLen = 256 // no id worth looking up is longer
)

// checkID validates an id as a person typed or pasted it and returns it
// without surrounding spaces. short allows ids below MinIDLen (a JSON-RPC
// id such as "1", looked up only together with an agent and a bounded time
// range). The reasons never quote the id.
func checkID(id string, short bool) (string, error) {
	id = strings.Trim(id, " ")
	switch {
	case id == "":
		return "", &BadIDError{Reason: "empty"}
	case len(id) < MinIDLen && !short:
		return "", &BadIDError{Reason: "shorter than 4 bytes (a JSON-RPC id needs the agent)"}
	case len(id) > MaxIDLen:
		return "", &BadIDError{Reason: "longer than 256 bytes"}
	case !utf8.ValidString(id):
		return "", &BadIDError{Reason: "not valid UTF-8"}
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return "", &BadIDError{Reason: "contains a control character or line break"}
		}
	}
	return id, nil
}

// checkName validates an optional filter value (an agent, a caller, an
// event id): empty is allowed, else the rules of an id without the minimum
// length. what names the field in the reason.
func checkName(v, what string) (string, error) {
	if v == "" {
		return "", nil
	}
	v, err := checkID(v, true)
	if err != nil {
		err.(*BadIDError).Reason = what + ": " + err.(*BadIDError).Reason
	}
	return v, err
}
