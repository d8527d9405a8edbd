// Package wire is the kit every door of engram reads requests and writes
// refusals with: the REST API (server), the MCP tools (mcp, over stdio and
// streamable HTTP) and the console (web). One mistake reads alike through
// any door because there is one copy of the rules, not one per door.
//
// It holds three things:
//
//   - strict JSON decoding (Decode, CheckDocument): the size, UTF-8, NUL,
//     lone-surrogate, depth, duplicate-field, field-case, unknown-field,
//     type and trailing-data rules, with the messages clients see;
//   - the checks on what names a thing in a URL (PathKey for keys, whose
//     encoded slash would make two spellings of one key; MemoryID); the
//     rules themselves (engram.NormalizeKey, engram.CheckID) stay in the
//     root package, where the services apply them too;
//   - the one translation of an error code to an HTTP status (Status,
//     ErrorBody), including the codes only a door uses (EMETHOD,
//     EFORBIDDEN).
//
// # The kit tier
//
// Packages under internal/ are engram's kit (DESIGN §2): mechanics that
// several packages need, kept once instead of copied, since copies drift
// (the MCP door once accepted duplicate fields that REST refused). Every
// package may import the kit; a kit package imports only the root
// package, the leaves (analysis, tokens), other kit packages and
// third-party or standard packages, never an adapter such as server or
// store, and the root never imports the kit. layers_test.go enforces
// this. A kit package holds mechanics, not policy: what a vote does or
// what a key means is decided in the root or a service package.
package wire
