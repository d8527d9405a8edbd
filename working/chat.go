package working

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/openai"
)

// Chat summarises older rounds of a session through an OpenAI-compatible
// chat completions endpoint (POST <base_url>/chat/completions), one line a
// round. Its answer is used only when it is a JSON array with one
// non-empty line per round; otherwise the deterministic compression is,
// and the reason is reported as the context's fallback.
type Chat struct {
	client *openai.Client
}

// NewChat returns a summariser; timeout bounds each call, retries
// included.
func NewChat(baseURL, model, apiKey string, timeout time.Duration) *Chat {
	return &Chat{client: openai.New(openai.Config{BaseURL: baseURL, APIKey: apiKey, Model: model, Timeout: timeout})}
}

// Name is the summariser's name in a context: "chat:<model>".
func (c *Chat) Name() string { return "chat:" + c.client.Model() }

// maxRoundChars bounds the text of one round shown to the model, and
// maxSummaryChars one line of its answer.
const (
	maxRoundChars   = 2000
	maxSummaryChars = 400
)

// Summarize returns one "- " line per round, in order.
func (c *Chat) Summarize(ctx context.Context, rs []*round) ([]string, error) {
	var list strings.Builder
	for i, r := range rs {
		var lines []string
		for _, e := range r.events {
			lines = append(lines, line(e))
		}
		text := strings.Join(lines, "\n")
		if len(text) > maxRoundChars {
			text = strings.ToValidUTF8(text[:maxRoundChars], "") + " …"
		}
		fmt.Fprintf(&list, "Round %d:\n%s\n\n", i+1, text)
	}
	system := fmt.Sprintf(`You compress the older rounds of an agent's working session. Summarise each numbered round in one line of at most 30 words, keeping names, numbers, decisions and outcomes, in the language of the round. Answer with a JSON array of exactly %d strings, one per round, in order, and nothing else.`, len(rs))
	answer, err := c.client.Chat(ctx, []openai.Message{{Role: "system", Content: system}, {Role: "user", Content: list.String()}})
	if err != nil {
		return nil, fmt.Errorf("chat summariser: %w", err)
	}
	text := strings.TrimSpace(answer)
	text = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```"), "```")
	var lines []string
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &lines); err != nil {
		return nil, errors.New("chat summariser: the answer is not a JSON array of strings")
	}
	if len(lines) != len(rs) {
		return nil, fmt.Errorf("chat summariser: %d lines for %d rounds", len(lines), len(rs))
	}
	for i, l := range lines {
		l = fold(l)
		if l == "" || utf8.RuneCountInString(l) > maxSummaryChars {
			return nil, fmt.Errorf("chat summariser: line %d is empty or longer than %d characters", i+1, maxSummaryChars)
		}
		lines[i] = "- " + l
	}
	return lines, nil
}
