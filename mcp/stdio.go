package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

// batchFilter stands between stdin and the SDK's stdio transport, which
// reads one JSON-RPC message or batch per line: a batch line that
// checkBatch refuses never reaches the SDK, so none of its calls runs,
// and the client gets one JSON-RPC error for it (id null, as JSON-RPC
// answers a batch it cannot take), written through the same locked writer
// as the SDK's answers so that lines never interleave. Every other line
// passes unchanged.
type batchFilter struct {
	s       *Server
	in      *bufio.Reader
	closer  io.Closer
	out     *lockedWriter
	pending []byte
}

func (f *batchFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, err := f.in.ReadBytes('\n')
		if b := bytes.TrimSpace(line); len(b) > 0 && b[0] == '[' {
			if cerr := f.s.checkBatch(b); cerr != nil {
				if werr := f.refuse(cerr); werr != nil {
					return 0, werr
				}
				line = nil
			}
		}
		f.pending = line
		if err != nil && len(f.pending) == 0 {
			return 0, err
		}
		if err != nil {
			f.in = bufio.NewReader(eofReader{err})
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

func (f *batchFilter) Close() error { return f.closer.Close() }

// refuse answers a refused batch: JSON-RPC's invalid request (-32600)
// with engram's message, and engram's error body as its data.
func (f *batchFilter) refuse(err error) error {
	type rpcError struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	line, _ := json.Marshal(struct {
		JSONRPC string   `json:"jsonrpc"`
		ID      any      `json:"id"`
		Error   rpcError `json:"error"`
	}{"2.0", nil, rpcError{-32600, engram.ErrorMessage(err), wire.ErrorBody(err)}})
	_, werr := f.out.Write(append(line, '\n'))
	return werr
}

// eofReader returns err for ever: what stdin ended with, after the last
// line was passed on.
type eofReader struct{ err error }

func (r eofReader) Read([]byte) (int, error) { return 0, r.err }

// lockedWriter serialises whole writes: the SDK writes each message with
// one Write, and so does batchFilter.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Close()
}
