// Package report builds the conformance report of an agent: which rules of
// its protocol its error replies break, how often, and what to change.
package report
