package reflections

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/openai"
)

// Chat writes abstractive reflections through an OpenAI-compatible chat
// completions endpoint (POST <base_url>/chat/completions). Its text is
// used only when it cites nothing but members of the group and keeps the
// reflection's sections; otherwise the extractive writer's is, and the
// reason is reported.
type Chat struct {
	client *openai.Client
}

// NewChat returns a chat writer; timeout bounds each call, retries
// included.
func NewChat(baseURL, model, apiKey string, timeout time.Duration) *Chat {
	return &Chat{client: openai.New(openai.Config{BaseURL: baseURL, APIKey: apiKey, Model: model, Timeout: timeout})}
}

// Name is the writer's name in a reflection: "chat:<model>".
func (c *Chat) Name() string { return "chat:" + c.client.Model() }

// maxChatMembers bounds the memories one request shows the model: the
// most central ones.
const maxChatMembers = 60

var memoryID = regexp.MustCompile(`mem_[a-z2-7]+`)

// citation is a bare id in brackets, as the model is asked to cite.
var citation = regexp.MustCompile(`\[(mem_[a-z2-7]+)\]`)

// Write asks the model for the group's reflection and checks it. The
// returned Markdown has each [mem_…] citation turned into a link.
func (c *Chat) Write(ctx context.Context, g Group) (string, []engram.MemoryRef, error) {
	w := g.words()
	items := top(rank(g), maxChatMembers, func(s scored) (float64, bool) { return s.centrality * s.quality, true })
	byID := map[string]*engram.Memory{}
	var list strings.Builder
	for _, it := range items {
		m := it.m
		byID[m.ID] = m
		fmt.Fprintf(&list, "[%s] (up %d, down %d, reward %.2f, confidence %.2f%s) %s\n", m.ID, m.UpCount, m.DownCount,
			m.Reward, m.Confidence, map[bool]string{true: ", needs revision"}[m.NeedsRevision], strings.Join(strings.Fields(m.Content), " "))
	}
	lang := "English"
	if g.chinese() {
		lang = "Chinese"
	}
	system := fmt.Sprintf(`You write a reflection: a short Markdown digest of a user's memories for an analyst. Write in %s.
Start with "# %s". Then exactly these sections as "## " headings, in order: %q, %q, %q, %q, %q.
Every bullet states one claim and cites the memories it rests on by their ids in square brackets, e.g. [mem_abc]. Cite only ids from the list. Do not invent facts. Under a section with nothing to say, write %q.`,
		lang, g.Title(), w.known, w.worked, w.failed, w.conflicts, w.open, w.none)
	text, err := c.client.Chat(ctx, []openai.Message{{Role: "system", Content: system}, {Role: "user", Content: list.String()}})
	if err != nil {
		return "", nil, fmt.Errorf("chat: %w", err)
	}
	for _, id := range memoryID.FindAllString(text, -1) {
		if byID[id] == nil {
			return "", nil, fmt.Errorf("chat: cites %s, which is not in the group", id)
		}
	}
	for _, h := range []string{w.known, w.worked, w.failed, w.conflicts, w.open} {
		if !strings.Contains(text, "## "+h) {
			return "", nil, fmt.Errorf("chat: section %q is missing", h)
		}
	}
	cited := map[string]bool{}
	text = citation.ReplaceAllStringFunc(text, func(s string) string {
		m := byID[citation.FindStringSubmatch(s)[1]]
		cited[m.ID] = true
		return cite(m)
	})
	if len(cited) == 0 {
		return "", nil, errors.New("chat: cites no memory")
	}
	refs := make([]engram.MemoryRef, 0, len(cited))
	for _, it := range items {
		if cited[it.m.ID] {
			refs = append(refs, engram.MemoryRef{ID: it.m.ID, Version: it.m.Version})
		}
	}
	return text, refs, nil
}
