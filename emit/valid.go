package emit

import (
	"encoding/json"
	"unicode/utf8"
)

// validJSON reports whether body can be embedded in an event as body_json
// and still decode: exactly one JSON value (encoding/json's grammar),
// strings in UTF-8, and containers nested at most maxDepth deep. The decoder's own check is
// parse.ValidJSON, the decoder's tape; emit does not link the decoder, so
// TestValidJSONAgreesWithDecoder and FuzzValidJSON hold the two to the same
// verdict. A body this check refuses travels as text (body), which decodes
// to the same record.
func validJSON(body []byte, maxDepth int) bool {
	return utf8.Valid(body) && depthAtMost(body, maxDepth) && json.Valid(body)
}

// depthAtMost reports whether brackets outside strings nest at most max
// deep (what is between them is json.Valid's to check).
func depthAtMost(b []byte, max int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			if i = skipString(b, i); i < 0 {
				return true // unterminated: json.Valid refuses it
			}
			i--
		case '{', '[':
			if depth++; depth > max {
				return false
			}
		case '}', ']':
			depth--
		}
	}
	return true
}
