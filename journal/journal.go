// Package journal will hold engram's file mirror (DESIGN §6): log.jsonl,
// an index/ tree with one file per live key, state.jsonl snapshots and
// archive/ rotation, for agents that search memory with ls, grep and jq.
// It follows the store's change feed (engram.ChangeFeed) from its last
// applied sequence, so the store stays the source of truth and the mirror
// can be rebuilt from it at any time.
//
// Nothing is implemented yet.
package journal
