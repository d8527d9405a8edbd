// Package web will hold engram's console (DESIGN §2): server-rendered
// html/template pages embedded with go:embed, reflections rendered with
// goldmark (raw HTML omitted), and no Node build step.
//
// Nothing is implemented yet.
package web
