package learning

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/feed"
	"github.com/engram-memory/engram/internal/openai"
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
	client *openai.Client
	dims   int
}

// NewOpenAIEmbedder returns a client for baseURL (e.g.
// "https://api.openai.com/v1"); dims 0 leaves the size to the model.
// timeout bounds each call, retries included.
func NewOpenAIEmbedder(baseURL, model, key string, dims int, timeout time.Duration) *OpenAIEmbedder {
	return &OpenAIEmbedder{client: openai.New(openai.Config{BaseURL: baseURL, APIKey: key, Model: model, Timeout: timeout}), dims: dims}
}

// Model implements Embedder.
func (e *OpenAIEmbedder) Model() string { return e.client.Model() }

// Embed implements Embedder. The API key is sent as a bearer token and
// never appears in errors.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := e.client.Embed(ctx, texts, e.dims)
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	return vecs, nil
}

// VectorStore keeps and searches embeddings.
type VectorStore interface {
	SaveVector(ctx context.Context, memoryID, model string, vec []float32) error
	VectorSearch(ctx context.Context, model string, vec []float32, agentID string, limit int) ([]engram.LexicalHit, error)
}

// EmbedConsumer names the embeddings' cursor in the change feed.
const EmbedConsumer = "embeddings"

// Embeddings keeps the vectors of memories in step with their text by
// following the store's change feed (DESIGN §2) with the kit's follower
// (internal/feed): whatever wrote a memory — the API, MCP, the sleep
// cycle, an import, any server on the database — its new text is embedded
// once. Progress is a cursor per tenant in the store, leased to one server
// at a time, so several servers share the work and a crash loses none of
// it. A failing endpoint never blocks a write; the memory stays searchable
// lexically and the follower retries with a growing back-off.
type Embeddings struct {
	e        Embedder
	feed     engram.ChangeFeed
	vs       VectorStore
	follower *feed.Follower
}

// NewEmbeddings returns the follower; holder names this process in the
// leases it takes (unique per server).
func NewEmbeddings(e Embedder, changes engram.ChangeFeed, cursors engram.FeedCursors, vs VectorStore, holder string, log *slog.Logger) *Embeddings {
	w := &Embeddings{e: e, feed: changes, vs: vs}
	w.follower = feed.New(feed.Config{Consumer: EmbedConsumer, Holder: holder, Cursors: cursors, Apply: w.embed, Log: log})
	return w
}

// embedPage is how many changes one step reads, and embedBatch how many
// texts one call to the endpoint sends.
const (
	embedPage  = 256
	embedBatch = 64
)

// Run follows the feed until ctx ends, checking for work every poll when
// there is none.
func (w *Embeddings) Run(ctx context.Context, poll time.Duration) { w.follower.Run(ctx, poll) }

// Step claims one tenant with unembedded changes, embeds the live
// memories whose text changed in up to embedPage of its changes, and
// advances its cursor. It reports whether it found work.
func (w *Embeddings) Step(ctx context.Context) (bool, error) { return w.follower.Step(ctx) }

// CatchUp steps until no tenant has unembedded changes, so that every
// memory written before the call has its vector (benchmarks, tools).
func (w *Embeddings) CatchUp(ctx context.Context) error {
	for {
		found, err := w.Step(ctx)
		if err != nil || !found {
			return err
		}
	}
}

// embed embeds what changed in the feed of the tenant in tctx after seq
// and returns the sequence it got to (feed.ApplyFunc).
func (w *Embeddings) embed(tctx context.Context, _ string, after int64) (int64, error) {
	changes, err := w.feed.Changes(tctx, after, embedPage)
	if err != nil {
		return after, err
	}
	var order []string
	latest := map[string]*engram.Memory{}
	for _, c := range changes {
		m := c.After
		if m == nil || !m.Valid || m.Archived || (c.Before != nil && c.Before.Valid && !c.Before.Archived && embedText(c.Before) == embedText(m)) {
			continue
		}
		if _, seen := latest[m.ID]; !seen {
			order = append(order, m.ID)
		}
		latest[m.ID] = m
	}
	for i := 0; i < len(order); i += embedBatch {
		ids := order[i:min(i+embedBatch, len(order))]
		texts := make([]string, len(ids))
		for j, id := range ids {
			texts[j] = embedText(latest[id])
		}
		vecs, err := w.e.Embed(tctx, texts)
		if err != nil {
			return after, fmt.Errorf("embed %d memories of tenant %s: %w", len(texts), engram.TenantFromContext(tctx), err)
		}
		for j, id := range ids {
			if err := w.vs.SaveVector(tctx, id, w.e.Model(), vecs[j]); err != nil && engram.ErrorCode(err) != engram.ENOTFOUND {
				return after, err
			}
		}
	}
	if len(changes) == 0 {
		return after, nil
	}
	return changes[len(changes)-1].Seq, nil
}

// embedText is what a memory's vector encodes: content and context.
func embedText(m *engram.Memory) string {
	if m.Context == "" {
		return m.Content
	}
	return m.Content + "\n" + m.Context
}
