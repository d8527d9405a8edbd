package working

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Chat summarises older rounds of a session through an OpenAI-compatible
// chat completions endpoint (POST <base_url>/chat/completions), one line a
// round. Its answer is used only when it is a JSON array with one
// non-empty line per round; otherwise the deterministic compression is,
// and the reason is reported as the context's fallback.
type Chat struct {
	baseURL, model, apiKey string
	client                 *http.Client
}

// NewChat returns a summariser; timeout bounds each call.
func NewChat(baseURL, model, apiKey string, timeout time.Duration) *Chat {
	return &Chat{baseURL: strings.TrimSuffix(baseURL, "/"), model: model, apiKey: apiKey, client: &http.Client{Timeout: timeout}}
}

// Name is the summariser's name in a context: "chat:<model>".
func (c *Chat) Name() string { return "chat:" + c.model }

// maxRoundChars bounds the text of one round shown to the model, and
// maxSummaryChars one line of its answer.
const (
	maxRoundChars   = 2000
	maxSummaryChars = 400
)

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

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
	body, _ := json.Marshal(map[string]any{"model": c.model, "temperature": 0,
		"messages": []chatMessage{{Role: "system", Content: system}, {Role: "user", Content: list.String()}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("chat summariser: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, errors.New("chat summariser: request failed")
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, errors.New("chat summariser: reading the answer failed")
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("chat summariser: status %d", resp.StatusCode)
	}
	var out struct {
		Choices []struct {
			Message chatMessage `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Choices) == 0 {
		return nil, errors.New("chat summariser: not a chat completion")
	}
	text := strings.TrimSpace(out.Choices[0].Message.Content)
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
