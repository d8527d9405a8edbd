// Preference-pair exporters (DESIGN §4). The line shapes follow:
//
//   - Hugging Face TRL, "Dataset formats and types":
//     https://huggingface.co/docs/trl/dataset_formats
//     standard preference {"prompt","chosen","rejected"}, conversational
//     preference (message lists, chosen/rejected as assistant messages) and
//     standard unpaired preference {"prompt","completion","label"}.
//   - OpenAI, "Direct preference optimization":
//     https://developers.openai.com/api/docs/guides/direct-preference-optimization
//     and the per-line schema, "Training format for chat models using the
//     preference method":
//     https://platform.openai.com/docs/api-reference/fine-tuning/preference-input
//     The schema marks input.tools and input.parallel_tool_calls optional
//     (the latter defaults to true), so they are left out: we export no tools.

package learning

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/engram-memory/engram"
)

// Format is a preference-data export format.
type Format string

// The export formats.
const (
	// FormatTRL is TRL standard preference: {"prompt","chosen","rejected"}, all text.
	FormatTRL Format = "trl"
	// FormatTRLConversational is TRL conversational preference: prompt,
	// chosen and rejected as lists of {"role","content"} messages.
	FormatTRLConversational Format = "trl-conversational"
	// FormatTRLUnpaired is TRL standard unpaired preference (KTO):
	// {"prompt","completion","label"}.
	FormatTRLUnpaired Format = "trl-unpaired"
	// FormatOpenAI is OpenAI preference fine-tuning (DPO):
	// {"input":{"messages"},"preferred_output","non_preferred_output"}.
	FormatOpenAI Format = "openai"
)

// ParseFormat returns the Format named s, or EINVALID naming the known
// formats. Names are matched exactly.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatTRL, FormatTRLConversational, FormatTRLUnpaired, FormatOpenAI:
		return f, nil
	}
	return "", engram.Errorf(engram.EINVALID,
		"unknown export format %q: want trl, trl-conversational, trl-unpaired or openai", s)
}

// Paired reports whether f carries preference pairs (Encoder.Pair) rather
// than lone judged answers (Encoder.Unpaired): false only for trl-unpaired.
func (f Format) Paired() bool { return f != FormatTRLUnpaired }

// message is one chat message of an exported line. It is declared here,
// not taken from engram.Message, so that a field added to the API type
// cannot silently change the training formats.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// The lines of each format. Structs, not maps, keep the key order stable.
type (
	trlLine struct {
		Prompt   string `json:"prompt"`
		Chosen   string `json:"chosen"`
		Rejected string `json:"rejected"`
	}
	trlConversationalLine struct {
		Prompt   []message `json:"prompt"`
		Chosen   []message `json:"chosen"`
		Rejected []message `json:"rejected"`
	}
	trlUnpairedLine struct {
		Prompt     string `json:"prompt"`
		Completion string `json:"completion"`
		Label      bool   `json:"label"`
	}
	openAILine struct {
		Input              openAIInput `json:"input"`
		PreferredOutput    []message   `json:"preferred_output"`
		NonPreferredOutput []message   `json:"non_preferred_output"`
	}
	openAIInput struct {
		Messages []message `json:"messages"`
	}
)

// Encoder writes preference data as JSON Lines in one Format. Each call
// writes exactly one "\n"-terminated line with a single Write, so a
// stream cut between calls holds only whole lines; Encoder does no
// buffering of its own (wrap w in a bufio.Writer for many small writes to
// a file). "<", ">", "&" and non-ASCII text are written literally.
//
// The line values and message slices live in the Encoder and are reused,
// so encoding allocates nothing per line in the steady state and memory
// stays constant however many lines are exported. An Encoder is not safe
// for concurrent use.
type Encoder struct {
	f   Format
	enc *json.Encoder

	trl   trlLine
	conv  trlConversationalLine
	unp   trlUnpairedLine
	oai   openAILine
	msgs  []message  // the prompt's messages
	chose [1]message // backing arrays of the one-message answer lists
	rej   [1]message
}

// NewEncoder returns an Encoder writing format f to w. An unknown f makes
// every call fail with EINVALID; use ParseFormat to validate names first.
func NewEncoder(w io.Writer, f Format) *Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &Encoder{f: f, enc: enc}
}

// Pair writes p as one line. It fails with EINVALID for a nil pair or on
// an unpaired format, and returns the writer's error if the write fails.
func (e *Encoder) Pair(p *engram.Pair) error {
	if p == nil {
		return engram.Errorf(engram.EINVALID, "nil pair")
	}
	switch e.f {
	case FormatTRL:
		e.trl = trlLine{Prompt: p.Prompt, Chosen: p.Chosen, Rejected: p.Rejected}
		return e.enc.Encode(&e.trl)
	case FormatTRLConversational:
		e.conv = trlConversationalLine{
			Prompt:   e.prompt(p.Prompt, p.Messages),
			Chosen:   assistant(&e.chose, p.Chosen),
			Rejected: assistant(&e.rej, p.Rejected),
		}
		return e.enc.Encode(&e.conv)
	case FormatOpenAI:
		e.oai = openAILine{
			Input:              openAIInput{Messages: e.prompt(p.Prompt, p.Messages)},
			PreferredOutput:    assistant(&e.chose, p.Chosen),
			NonPreferredOutput: assistant(&e.rej, p.Rejected),
		}
		return e.enc.Encode(&e.oai)
	case FormatTRLUnpaired:
		return engram.Errorf(engram.EINVALID, "export format %s takes unpaired examples, not pairs", e.f)
	}
	return engram.Errorf(engram.EINVALID, "unknown export format %q", string(e.f))
}

// Unpaired writes u as one line. It fails with EINVALID for a nil example
// or on a paired format, and returns the writer's error if the write fails.
func (e *Encoder) Unpaired(u *engram.Unpaired) error {
	if u == nil {
		return engram.Errorf(engram.EINVALID, "nil unpaired example")
	}
	switch e.f {
	case FormatTRLUnpaired:
		e.unp = trlUnpairedLine{Prompt: u.Prompt, Completion: u.Completion, Label: u.Label}
		return e.enc.Encode(&e.unp)
	case FormatTRL, FormatTRLConversational, FormatOpenAI:
		return engram.Errorf(engram.EINVALID, "export format %s takes pairs, not unpaired examples", e.f)
	}
	return engram.Errorf(engram.EINVALID, "unknown export format %q", string(e.f))
}

// prompt returns the prompt as chat messages: the client's messages when
// it sent some, else the text as a single user message.
func (e *Encoder) prompt(text string, msgs []engram.Message) []message {
	e.msgs = e.msgs[:0]
	if len(msgs) == 0 {
		e.msgs = append(e.msgs, message{Role: "user", Content: text})
		return e.msgs
	}
	for _, m := range msgs {
		e.msgs = append(e.msgs, message{Role: m.Role, Content: m.Content})
	}
	return e.msgs
}

// assistant returns content as a one-element list of assistant messages,
// backed by buf.
func assistant(buf *[1]message, content string) []message {
	buf[0] = message{Role: "assistant", Content: content}
	return buf[:]
}

// PairSource is where exported lines come from: the store's pairs and
// judged answers of the tenant in the context, oldest first.
type PairSource interface {
	EachPair(ctx context.Context, f engram.PairFilter, fn func(*engram.Pair) error) (string, error)
	EachUnpaired(ctx context.Context, f engram.PairFilter, fn func(*engram.Unpaired) error) (string, error)
}

// Export writes every line of format f that matches filter to w, pairs
// or judged answers as f holds, and returns how many it wrote: the whole
// export, the lines GET /v1/pairs streams page by page.
func Export(ctx context.Context, src PairSource, w io.Writer, f Format, filter engram.PairFilter) (int, error) {
	enc := NewEncoder(w, f)
	n := 0
	var err error
	if f.Paired() {
		_, err = src.EachPair(ctx, filter, func(p *engram.Pair) error { n++; return enc.Pair(p) })
	} else {
		_, err = src.EachUnpaired(ctx, filter, func(u *engram.Unpaired) error { n++; return enc.Unpaired(u) })
	}
	if err != nil {
		return n, fmt.Errorf("learning: export %s: %w", f, err)
	}
	return n, nil
}
