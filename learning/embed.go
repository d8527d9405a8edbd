package learning

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

// Embedder turns texts into dense vectors.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the vectors, so that vectors of another model are
	// never compared with them.
	Model() string
}

// OpenAIEmbedder calls an OpenAI-compatible POST {base}/embeddings.
type OpenAIEmbedder struct {
	baseURL, model, key string
	dims                int
	client              *http.Client
}

// NewOpenAIEmbedder returns a client for baseURL (e.g.
// "https://api.openai.com/v1"); dims 0 leaves the size to the model.
// timeout bounds each call.
func NewOpenAIEmbedder(baseURL, model, key string, dims int, timeout time.Duration) *OpenAIEmbedder {
	return &OpenAIEmbedder{baseURL: strings.TrimSuffix(baseURL, "/"), model: model, key: key, dims: dims,
		client: &http.Client{Timeout: timeout}}
}

// Model implements Embedder.
func (e *OpenAIEmbedder) Model() string { return e.model }

type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type embeddingResponse struct {
	Data []struct {
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	} `json:"data"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Embed implements Embedder. The API key is sent as a bearer token and
// never appears in errors.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	body, _ := json.Marshal(embeddingRequest{Model: e.model, Input: texts, EncodingFormat: "float", Dimensions: e.dims})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.baseURL+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.key != "" {
		req.Header.Set("Authorization", "Bearer "+e.key)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("embeddings: read: %w", err)
	}
	var out embeddingResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("embeddings: status %d, undecodable body", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		msg := ""
		if out.Error != nil {
			msg = out.Error.Message
		}
		return nil, fmt.Errorf("embeddings: status %d: %s", resp.StatusCode, msg)
	}
	vecs := make([][]float32, len(texts))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(texts) || len(d.Embedding) == 0 {
			return nil, errors.New("embeddings: response does not match the request")
		}
		vecs[d.Index] = d.Embedding
	}
	for _, v := range vecs {
		if v == nil {
			return nil, errors.New("embeddings: response lacks an input")
		}
	}
	return vecs, nil
}

// VectorStore keeps and searches embeddings.
type VectorStore interface {
	SaveVector(ctx context.Context, memoryID, model string, vec []float32) error
	VectorSearch(ctx context.Context, model string, vec []float32, agentID string, limit int) ([]engram.LexicalHit, error)
}

// Embedding wraps a MemoryService so that every memory written is
// embedded after its write commits. The write never waits on a failing
// endpoint beyond the client's timeout and never fails because of it: the
// memory stays searchable lexically and the failure is logged.
func Embedding(mem engram.MemoryService, e Embedder, vs VectorStore, log *slog.Logger) engram.MemoryService {
	return &embedding{MemoryService: mem, e: e, vs: vs, log: log}
}

type embedding struct {
	engram.MemoryService
	e   Embedder
	vs  VectorStore
	log *slog.Logger
}

func (w *embedding) index(ctx context.Context, ms ...*engram.Memory) {
	var texts []string
	var live []*engram.Memory
	for _, m := range ms {
		if m != nil && m.Valid && !m.Archived {
			texts = append(texts, embedText(m))
			live = append(live, m)
		}
	}
	if len(texts) == 0 {
		return
	}
	vecs, err := w.e.Embed(ctx, texts)
	if err != nil {
		w.log.Warn("embedding memories failed; they stay lexical only", "err", err, "memories", len(texts))
		return
	}
	for i, m := range live {
		if err := w.vs.SaveVector(ctx, m.ID, w.e.Model(), vecs[i]); err != nil {
			w.log.Warn("saving an embedding failed", "err", err, "memory_id", m.ID)
		}
	}
}

// embedText is what a memory's vector encodes: content and context.
func embedText(m *engram.Memory) string {
	if m.Context == "" {
		return m.Content
	}
	return m.Content + "\n" + m.Context
}

func (w *embedding) CreateMemory(ctx context.Context, m *engram.Memory) (*engram.CreateResult, error) {
	res, err := w.MemoryService.CreateMemory(ctx, m)
	if err == nil && !res.Deduplicated {
		w.index(ctx, res.Memory)
	}
	return res, err
}

func (w *embedding) CreateMemories(ctx context.Context, ms []*engram.Memory) ([]*engram.CreateResult, error) {
	res, err := w.MemoryService.CreateMemories(ctx, ms)
	if err == nil {
		var fresh []*engram.Memory
		for _, r := range res {
			if !r.Deduplicated {
				fresh = append(fresh, r.Memory)
			}
		}
		w.index(ctx, fresh...)
	}
	return res, err
}

func (w *embedding) UpdateMemory(ctx context.Context, id string, u engram.MemoryUpdate) (*engram.Memory, error) {
	m, err := w.MemoryService.UpdateMemory(ctx, id, u)
	if err == nil && (u.Content != nil || u.Context != nil) {
		w.index(ctx, m)
	}
	return m, err
}

func (w *embedding) RollbackMemory(ctx context.Context, id string, version int64, expect *int64) (*engram.Memory, error) {
	m, err := w.MemoryService.RollbackMemory(ctx, id, version, expect)
	if err == nil {
		w.index(ctx, m)
	}
	return m, err
}

func (w *embedding) SetKey(ctx context.Context, kw engram.KeyWrite) (*engram.Memory, error) {
	m, err := w.MemoryService.SetKey(ctx, kw)
	if err == nil {
		w.index(ctx, m)
	}
	return m, err
}
