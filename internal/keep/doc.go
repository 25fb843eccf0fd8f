// Package keep holds the rules of what a reply may carry out of a process
// that hold without a detector: the header allow-list (Header), the names
// of credential headers and keys (SecretName, SensitiveHeader), and the
// structure of field paths and endpoints (AppendPath, AppendEndpoint:
// userinfo, query and fragment dropped, value-like segments replaced).
//
// It is declared once here and used twice: by redact (the decoder's
// redactor, which adds its text pass and the libphonenumber check through
// the TextView hook) and by emit (the producers' library, which must stay
// light: this package imports only the standard library). So an agent that
// imports emit drops the same headers the decoder ignores, and the
// endpoint it publishes is one the decoder stores unchanged.
package keep
