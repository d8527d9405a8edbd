package reflections

import (
	"bytes"
	"fmt"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// markdown renders GitHub-flavoured Markdown (tables, task lists,
// strikethrough, autolinks). goldmark's HTML renderer is left safe: raw
// HTML in the source is omitted and javascript:, vbscript: and file: links
// are dropped, so no memory text can inject markup into the console.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// RenderHTML renders a reflection's Markdown as safe HTML.
func RenderHTML(src string) (string, error) {
	var b bytes.Buffer
	if err := markdown.Convert([]byte(src), &b); err != nil {
		return "", fmt.Errorf("reflections: render: %w", err)
	}
	return b.String(), nil
}
