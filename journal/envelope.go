package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/engram-memory/engram"
)

// Envelope is one line of log.jsonl, state.jsonl and an index file: a
// memory's state as a write left it. The first five fields are those of
// DESIGN §6 (key, ts, valid, source, content); the rest say which memory
// and write it was. Content is the JSON a key was set to, byte for byte
// in meaning (strings are written with their characters, not \u escapes,
// so grep finds 牙科 and <b>), or the text of a memory without a key; it
// is null once the memory is no longer live (tombstoned or archived).
type Envelope struct {
	Key       string          `json:"key,omitempty"`
	TS        time.Time       `json:"ts"`
	Valid     bool            `json:"valid"`
	Source    json.RawMessage `json:"source,omitempty"`
	Content   json.RawMessage `json:"content"`
	ID        string          `json:"id"`
	Version   int64           `json:"version"`
	Seq       int64           `json:"seq"`
	Action    string          `json:"action"`
	Category  string          `json:"category"`
	Type      string          `json:"type,omitempty"`
	Tags      []string        `json:"tags,omitempty"`
	ExpiresAt *time.Time      `json:"expires_at,omitempty"`
	// Links are the links a "link" write made or an "unlink" write
	// removed; such an envelope is a line of log.jsonl only (the memory's
	// file keeps the envelope of its last change of content).
	Links []*engram.Link `json:"links,omitempty"`
	// Aliases are the aliases an "alias" write made or an "unalias" write
	// removed; such an envelope is a line of log.jsonl only, like a link's.
	Aliases []*engram.Alias `json:"aliases,omitempty"`
}

// view is what an envelope shows of a memory state, without the write's
// own fields (seq, ts, version, action): a change whose view does not
// differ (feedback, an access count) writes no envelope.
type view struct {
	key, id, category, typ, tags, expires string
	live                                  bool
	source, content                       string
}

func viewOf(m *engram.Memory) view {
	if m == nil {
		return view{}
	}
	v := view{key: m.Key, id: m.ID, category: m.Category, typ: m.Type, live: live(m),
		source: string(m.Source), content: m.Content}
	if m.Key != "" {
		v.content = string(m.Data)
	}
	tags, _ := json.Marshal(m.Tags)
	v.tags = string(tags)
	if m.ExpiresAt != nil {
		v.expires = m.ExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	return v
}

// live reports whether m is mirrored in index/ or memories/: valid and
// not archived, as the store's EachLive has it. A memory past expires_at
// stays until the sleep cycle archives it; its envelope carries the time.
func live(m *engram.Memory) bool { return m != nil && m.Valid && !m.Archived }

// envelopeOf returns the envelope of change c, or nil when c changes
// nothing an envelope shows.
func envelopeOf(c *engram.Change) (*Envelope, error) {
	if len(c.Links) == 0 && len(c.Aliases) == 0 && viewOf(c.Before) == viewOf(c.After) || c.After == nil {
		return nil, nil
	}
	m := c.After
	e := &Envelope{Key: m.Key, TS: c.At.UTC(), Valid: live(m), ID: m.ID, Version: c.Version, Seq: c.Seq,
		Action: c.Action, Category: m.Category, Type: m.Type, Tags: m.Tags, ExpiresAt: m.ExpiresAt,
		Content: json.RawMessage("null"), Links: c.Links, Aliases: c.Aliases}
	if e.ExpiresAt != nil {
		t := e.ExpiresAt.UTC()
		e.ExpiresAt = &t
	}
	var err error
	if len(bytes.TrimSpace(m.Source)) > 0 {
		if e.Source, err = plainJSON(m.Source); err != nil {
			return nil, fmt.Errorf("journal: source of %s: %w", m.ID, err)
		}
	}
	if e.Valid {
		if m.Key != "" && len(bytes.TrimSpace(m.Data)) > 0 {
			e.Content, err = plainJSON(m.Data)
		} else {
			e.Content, err = plainString(m.Content)
		}
		if err != nil {
			return nil, fmt.Errorf("journal: content of %s: %w", m.ID, err)
		}
	}
	return e, nil
}

// line is e as one line of JSON, newline included.
func (e *Envelope) line() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, fmt.Errorf("journal: encode envelope of %s: %w", e.ID, err)
	}
	return b.Bytes(), nil
}

// plainString is s as a JSON string with its characters as they are.
func plainString(s string) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// plainJSON rewrites one JSON value compactly with the same members in the
// same order and numbers as written, but every string spelt with its
// characters: a client that sent "\u7259\u79d1" is found by grep 牙科.
func plainJSON(raw []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b bytes.Buffer
	type frame struct {
		object bool
		n      int // tokens written inside: keys and values
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF && (len(stack) > 0 || b.Len() == 0) {
			return nil, io.ErrUnexpectedEOF
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(stack) == 0 && b.Len() > 0 {
			return nil, errors.New("more than one JSON value")
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			b.WriteByte(byte(d))
			continue
		}
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			switch {
			case top.object && top.n%2 == 1:
				b.WriteByte(':')
			case top.n > 0:
				b.WriteByte(',')
			}
			top.n++
		}
		switch t := tok.(type) {
		case json.Delim:
			stack = append(stack, frame{object: t == '{'})
			b.WriteByte(byte(t))
		case string:
			s, err := plainString(t)
			if err != nil {
				return nil, err
			}
			b.Write(s)
		case json.Number:
			b.WriteString(string(t))
		case bool:
			fmt.Fprint(&b, t)
		case nil:
			b.WriteString("null")
		}
	}
	return b.Bytes(), nil
}
