// Package redact is errtrail's one redactor: it decides, for every value
// that may reach a row, a log line, a metric or an API answer, whether it may
// be kept as it is. The decoder (parse), the dead-letter path (ingest) and
// the emitters all use it, so a rule added here holds everywhere.
//
// Values are handled by what they are, not only by what they look like:
//
//   - Free text (error messages, violation descriptions): AppendText and Text
//     replace credentials and customer values with placeholders such as
//     [secret], [jwt], [key], [pem], [email], [phone], [card], [iban] and
//     [ssn]. The detectors know their context: any value of a secret-named
//     key (password=, "token": …, Cookie: …; the credential after a scheme
//     word when the value is one: api_key=Bearer …), whole PEM blocks and
//     the body of a block cut before its BEGIN line, every HTTP
//     authentication scheme followed by any whitespace, JWTs and provider
//     key formats anywhere (after '=', in URLs, percent-encoded), card
//     numbers that pass the Luhn check, IBANs that pass the mod-97 check,
//     phone numbers that libphonenumber's metadata calls valid (national
//     formats too), US Social Security numbers (dashed anywhere, other
//     forms after a label) and e-mail addresses — but not timestamps, IP
//     addresses, versions,
//     package@version, git remotes, hex digests, UUIDs or order numbers.
//   - Identifiers (error ids, request ids, task and message ids, callers,
//     limit and scope names): Redactor.Ident keeps a value that fits the
//     identifier grammar and that no detector flags; any other value is
//     replaced by a keyed hash, "hmac:" and 24 hex digits, computed with a
//     deployment key that never reaches ClickHouse. A support engineer who
//     holds the original value finds the row by hashing it the same way
//     (Redactor.Lookup). Values that are only compared (idempotency keys)
//     get Redactor.Hash64, a keyed SipHash-2-4.
//   - Field paths (BadRequest field, AAP instanceLocation): Path keeps the
//     structure and replaces segments that look like values with {value}.
//   - Endpoints: Endpoint keeps scheme, host, port and a path whose
//     value-like segments become {id}; userinfo (also without a scheme, or
//     unencoded with '/' or '@' in it), query and fragment are dropped.
//   - Raw bytes kept for support or dead letters: Raw keeps only the
//     values of the header allow-list (KeptHeader, headers.go) in an HTTP
//     or gRPC header block and in an event's reply headers and trailers
//     (eventjson.go), then applies the text pass to everything, and caps
//     the result.
//   - Reply headers: KeptHeader is the one allow-list of the headers
//     errtrail keeps (the decoder's reads); the decoder and the emitters
//     drop every other header.
//
// Every pass is linear in its input, whatever the input: a detector that
// looks past its start takes the end of that run from a cache (runs.go),
// and Redactor.Work counts the bytes the detectors examined, which the tests
// hold to a fixed multiple of the text's length.
//
// docs/record.md lists every rule with its reason. The functions are safe
// for concurrent use except a Redactor, which keeps scratch space and a memo
// of recent verdicts: give each goroutine its own (New). AppendText,
// AppendIdent, Ident, IdentOnce, PathView, EndpointView and Hash64 allocate
// nothing in steady state unless a phone-number candidate has to be checked
// against libphonenumber's metadata (at most three per text).
package redact
