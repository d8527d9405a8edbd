package bench

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
)

// locomoData holds the questions no LoCoMo conversation answers
// (data/locomo/unanswerable.jsonl): per conversation, six off-topic
// questions and six about its speakers on things neither of them ever
// mentions, each checked against the conversation's text when written.
// The set was frozen before the relevance cut was tuned (its hash is
// tested) and measures what a recall injects when nothing answers.
//
//go:embed data/locomo/unanswerable.jsonl
var locomoData embed.FS

// unanswerableQuestion is one question a conversation cannot answer.
type unanswerableQuestion struct {
	SampleID string `json:"sample_id"`
	Question string `json:"question"`
	Kind     string `json:"kind"` // off_topic or absent
}

// unanswerable reads the frozen set.
func unanswerable() ([]unanswerableQuestion, error) {
	raw, err := locomoData.ReadFile("data/locomo/unanswerable.jsonl")
	if err != nil {
		return nil, err
	}
	var out []unanswerableQuestion
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		var q unanswerableQuestion
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("unanswerable: %w", err)
		}
		out = append(out, q)
	}
	return out, sc.Err()
}
