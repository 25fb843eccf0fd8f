package lookup

import "github.com/errtrail/errtrail/schema"

// The failures of the error store are sorted by schema.StoreError, which
// every reader of errtrail's tables shares (report too): the store is
// unavailable (retry later), or it answered that errtrail is configured
// wrong for it (fix the flags or run ingest migrate).

// ConfigError: the store answered, and what it said is a configuration
// mistake of this errtrail, not an outage (schema.ConfigError).
type ConfigError = schema.ConfigError

// UnavailableError: ClickHouse could not be asked. Err never quotes the id
// (schema.UnavailableError).
type UnavailableError = schema.UnavailableError

// StoreError is what a reader of errtrail's tables returns for a failure
// of the store: a *ConfigError when the server's answer is a configuration
// mistake, else an *UnavailableError (schema.StoreError). For readers of
// other packages; ids are not cut out, so err must not quote one.
func StoreError(err error) error { return schema.StoreError(err) }

// unavailable wraps a ClickHouse failure as StoreError does, its text
// never holding the ids or their hashes, even if the server quoted the
// query: they are cut out.
func unavailable(err error, ids []string) error { return schema.StoreError(err, ids...) }
