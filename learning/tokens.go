package learning

import (
	"fmt"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// The BPE ranks compiled into tiktoken-go-loader replace tiktoken-go's
// default loader, which would download them at first use.
var setLoader sync.Once

// Tokenizer counts tokens with a tiktoken encoding. It is safe for
// concurrent use; one is shared by the whole process because building the
// encoder parses a large rank table.
type Tokenizer struct {
	enc  *tiktoken.Tiktoken
	name string
}

// NewTokenizer returns a Tokenizer for "cl100k_base" or "o200k_base".
func NewTokenizer(encoding string) (*Tokenizer, error) {
	setLoader.Do(func() { tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader()) })
	enc, err := tiktoken.GetEncoding(encoding)
	if err != nil {
		return nil, fmt.Errorf("learning: tokenizer %q: %w", encoding, err)
	}
	return &Tokenizer{enc: enc, name: encoding}, nil
}

// Count returns the number of tokens of text; special-token text such as
// "<|endoftext|>" is counted as ordinary text, as a chat API would.
func (t *Tokenizer) Count(text string) int {
	return len(t.enc.EncodeOrdinary(text))
}

// Encoding returns the encoding's name.
func (t *Tokenizer) Encoding() string { return t.name }
