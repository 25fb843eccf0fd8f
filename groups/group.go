package groups

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// State is what is news about a group at a moment (see the package doc).
type State string

const (
	Seen       State = ""           // neither new nor a regression
	New        State = "new"        // first seen in the last hour on an agent with an hour of history before
	Regression State = "regression" // back after 24 h of silence, or in a newer version after a version without it
)

// Window is how long a group stays new after it is first seen, and how
// long an agent must have been seen before a group of it can be new.
const Window = time.Hour

// Silence is how long a group must have been quiet for its return to be a
// regression.
const Silence = 24 * time.Hour

// KindQuota is the kind that is never new nor a regression.
const KindQuota = "quota"

// Key is a group's fingerprint.
type Key struct {
	Agent    string `json:"agent"`
	Protocol string `json:"protocol"`
	Code     string `json:"code"` // the typed reason, else the protocol code (schema.GroupCodeExpr)
	Kind     string `json:"kind"`
	Method   string `json:"method"`
}

// ID is the group's id: the first 16 hex digits of the SHA-256 of its
// fingerprint's fields, NUL-separated. It is stable across databases and
// releases, so links and tickets keep pointing at the same group.
func (k Key) ID() string {
	h := sha256.New()
	for i, s := range []string{k.Agent, k.Protocol, k.Code, k.Kind, k.Method} {
		if i > 0 {
			h.Write([]byte{0})
		}
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// KeyOf is the fingerprint of a stored error reply: the typed reason where
// it has one, else its code (schema.GroupCodeExpr, the rollups' rule).
func KeyOf(agent, protocol, code, reason, kind, method string) Key {
	if reason != "" {
		code = reason
	}
	return Key{Agent: agent, Protocol: protocol, Code: code, Kind: kind, Method: method}
}

// Version is what one agent version did of a group.
type Version struct {
	Version   string    `json:"version"` // "" for events that named none
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Count     uint64    `json:"count"`
}

// Hour is a group's errors in one hour.
type Hour struct {
	Hour  time.Time `json:"hour"`
	Count uint64    `json:"count"`
}

// Group is one error group of one agent.
type Group struct {
	ID string `json:"id"`
	Key
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Count     uint64    `json:"count"`   // every error of the group the rollup holds
	Callers   uint64    `json:"callers"` // distinct callers (an estimate: ClickHouse's uniq)
	// Versions: the agent versions the group was seen with, newest first
	// (as versions; those that are not versions after them).
	Versions []Version `json:"versions"`
	// Example is the id of one of its errors, for the story: the latest
	// with an error_id, else the latest's event id.
	Example string `json:"example_id"`
	// Hours: its errors per hour in the range read, oldest first, hours
	// without errors left out.
	Hours []Hour `json:"hours"`
	State State  `json:"state,omitempty"`
	// Why says in words why State is what it is ("" when Seen).
	Why string `json:"why,omitempty"`
}
