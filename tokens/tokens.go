// Package tokens counts tokens exactly as tiktoken does (cl100k_base and
// o200k_base), offline: the BPE rank tables come compiled in from
// github.com/pkoukk/tiktoken-go-loader, so nothing is downloaded at run
// time. It is a leaf package: the store counts tokens at write time and the
// packer re-counts rendered context with the same counter.
package tokens

import "fmt"

// Tokenizer counts tokens with a tiktoken encoding, giving exactly the
// counts of tiktoken-go's EncodeOrdinary at a fraction of its cost (see
// bpe.go). It is safe for concurrent use, and all Tokenizers of one
// encoding share its rank table, which is large and slow to parse.
type Tokenizer struct {
	counter *fastCounter
	name    string
}

// New returns a Tokenizer for "cl100k_base" or "o200k_base".
func New(encoding string) (*Tokenizer, error) {
	c, err := counterFor(encoding)
	if err != nil {
		return nil, fmt.Errorf("tokens: tokenizer %q: %w", encoding, err)
	}
	return &Tokenizer{counter: c, name: encoding}, nil
}

// Count returns the number of tokens of text; special-token text such as
// "<|endoftext|>" is counted as ordinary text, as a chat API would.
func (t *Tokenizer) Count(text string) int {
	return t.counter.count(text)
}

// Encoding returns the encoding's name.
func (t *Tokenizer) Encoding() string { return t.name }
