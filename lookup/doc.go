// Package lookup tells the story of one stored error reply, for the support
// engineer who holds an id from a customer ticket and for the agent team that
// sent the reply.
package lookup
