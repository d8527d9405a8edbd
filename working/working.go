// Package working will hold engram's L1 layer (DESIGN §1, §8): working
// memory per run or thread — events (messages, sub-tasks, decisions, tool
// calls), a fixed zone that is never compressed and a sliding zone that is,
// a JSON state document per session, TTLs, and the messages that become L2
// episodes. It depends on the root package's interfaces only; cmd/engram
// wires it to the store.
//
// Nothing is implemented yet.
package working
