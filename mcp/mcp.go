// Package mcp will hold engram's Model Context Protocol server on the
// official go-sdk: the same tools over stdio (engram mcp) and streamable
// HTTP, the latter an http.Handler that server mounts at /mcp. It calls the
// root package's service interfaces only.
//
// Nothing is implemented yet.
package mcp
