package learning

import (
	"cmp"
	"context"
	"errors"
	"math"
	"net"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram"
)

// RecallStore is what a recall needs from the store.
type RecallStore interface {
	SearchMemories(ctx context.Context, q engram.LexicalQuery) ([]engram.LexicalHit, error)
	PinnedMemories(ctx context.Context, agentID string, limit int) ([]*engram.Memory, error)
	RecentMemories(ctx context.Context, agentID string, limit int) ([]*engram.Memory, error)
	FindMemoryByKey(ctx context.Context, key string) (*engram.Memory, error)
	SaveRecall(ctx context.Context, r *engram.Recall, agentID, sessionID string) error
	// FindHelpfulness returns the helpfulness evidence of the given
	// memories, by id: their own, their origins' and the tenant's totals.
	FindHelpfulness(ctx context.Context, mems []*engram.Memory) (map[string]engram.HelpEvidence, error)
	// EachReflection yields the tenant's current L3 reflections.
	EachReflection(ctx context.Context, fn func(*engram.Reflection) error) error
}

// maxRecallTags bounds the tags of one recall (each is compared with
// every candidate's tags).
const maxRecallTags = 32

// Header starts every rendered context.
const Header = "[Agent Memory]"

// PersonaKey is the key of the tenant's persona document, injected first
// by /v1/boot; an agent's own persona lives at /agents/<agent_id>/persona.
const PersonaKey = "/agent/persona"

// Recaller answers recalls: route, retrieve, score, pack, record.
type Recaller struct {
	store  RecallStore
	router engram.RouterService
	scorer *Scorer
	packer *Packer
	cfg    engram.RecallConfig
	now    engram.Clock
	dense  *dense
	// explore is the share of recalls that hold back one memory to
	// measure its impact, drawn from exploring (see explore.go).
	explore   float64
	exploring *exploreSource
	// probe is the share of qualifying recalls that probe a distrusted
	// kind (see WithKindProbes), drawn from probing.
	probe   float64
	probing *exploreSource
	links   LinkStore // nil: recalls do not follow links (see hop)
}

type dense struct {
	e   Embedder
	vs  VectorStore
	cfg DenseConfig
}

// DenseConfig tunes hybrid recall (the embeddings section of the config).
type DenseConfig struct {
	// Timeout bounds the query's embedding; past it the recall stays
	// lexical.
	Timeout time.Duration
	// Weight is the embedding's side of the fusion, in (0, 1] (see fuse).
	Weight float64
	// AgreeFloor is the least cosine at which one of the embedding's
	// nearest memories counts as agreeing with the query (see fuseMatch);
	// 0 lets the nearest agree whatever their cosine.
	AgreeFloor float64
}

// WithDense makes recalls hybrid: the query is embedded too, and the
// nearest memories are fused with the lexical hits (see fuse). A query
// embedding that fails or takes longer than cfg.Timeout leaves the
// recall lexical and names the reason in degrade_reasons.
func (r *Recaller) WithDense(e Embedder, vs VectorStore, cfg DenseConfig) *Recaller {
	r.dense = &dense{e: e, vs: vs, cfg: cfg}
	return r
}

var _ engram.RecallService = (*Recaller)(nil)

// NewRecaller returns a Recaller.
func NewRecaller(store RecallStore, router engram.RouterService, scorer *Scorer, tok engram.TokenCounter, cfg engram.RecallConfig, now engram.Clock) *Recaller {
	return &Recaller{store: store, router: router, scorer: scorer, packer: NewPacker(tok, Header), cfg: cfg, now: now}
}

// Recall implements engram.RecallService. A query longer than
// MaxQueryChars is cut, not refused, and "query_truncated" is reported. A
// budget too small for any memory gives an empty context, not an error.
// Only the candidates that pass the relevance cut are packed (see cut),
// and the best of the rest are listed in LeftOut with why.
func (r *Recaller) Recall(ctx context.Context, req engram.RecallRequest) (*engram.Recall, error) {
	query := strings.TrimSpace(req.Query)
	if query == "" {
		return nil, engram.Errorf(engram.EINVALID, "query must not be empty")
	}
	if err := engram.CheckBudget("token_budget", req.TokenBudget, r.cfg.MaxBudget); err != nil {
		return nil, err
	}
	if len(req.Tags) > maxRecallTags {
		return nil, engram.Errorf(engram.EINVALID, "at most %d tags", maxRecallTags)
	}
	for _, t := range req.Tags {
		if len(t) > 256 {
			return nil, engram.Errorf(engram.EINVALID, "a tag must be at most 256 bytes")
		}
	}
	if req.Hops != nil && (*req.Hops < 0 || *req.Hops > engram.MaxHops) {
		return nil, engram.Errorf(engram.EINVALID, "hops must be from 0 to %d", engram.MaxHops)
	}
	if len(req.AgentID) > 256 || len(req.SessionID) > 256 {
		return nil, engram.Errorf(engram.EINVALID, "agent_id and session_id must be at most 256 bytes")
	}
	if err := engram.CheckUserID(req.UserID); err != nil {
		return nil, err
	}
	if req.UserID != "" {
		// Every read below — pinned, search, vectors, persona — and the
		// recall record follow the user scope (user.go).
		ctx = engram.NewContextWithUser(ctx, req.UserID)
	}
	var degrade []string
	if utf8.RuneCountInString(query) > r.cfg.MaxQueryChars {
		query = string([]rune(query)[:r.cfg.MaxQueryChars])
		degrade = append(degrade, "query_truncated")
	}
	route, err := r.router.RouteQuery(ctx, query)
	if err != nil {
		return nil, err
	}
	cands, reasons, err := r.candidates(ctx, query, route, req)
	if err != nil {
		return nil, err
	}
	degrade = append(degrade, reasons...)
	probe := r.probeKinds(cands)
	inject, left := cut(cands, req.Identity || route.Identity, req.Fill)
	text, items, used := r.packer.Pack(inject, req.TokenBudget, RecallLine)
	held, inject := r.holdBack(query, inject, items)
	if held != nil {
		text, items, used = r.packer.Pack(inject, req.TokenBudget, RecallLine)
	}
	if items == nil {
		items = []engram.RecallItem{}
	}
	rec := &engram.Recall{
		Query: query, Route: *route, Items: items, Context: text, TokensUsed: used, TokenBudget: req.TokenBudget,
		DegradeReasons: degrade, LeftOut: leftOut(inject, left, items, held), HeldBack: held, Probe: probe, CreatedAt: r.now().UTC(),
	}
	if err := r.store.SaveRecall(ctx, rec, req.AgentID, req.SessionID); err != nil {
		return nil, err
	}
	return rec, nil
}

// candidates retrieves and scores. Hits in the routed categories are
// used when there are at least MinRouted of them; otherwise all hits are
// (the route guessed wrong, or the tenant is young). Request tags lift the
// memories that carry them: relevance × (0.8 + 0.2 × share of request
// tags found). Each candidate's Match is its hit's (see fuseMatch).
//
// Pinned P0 memories always qualify, as context (Breakdown.Pinned): their
// relevance and match are what the query gives them (0 when it does not
// find them), so they rank by how well they answer, not first. The one
// exception is the recall's best lexical hit, which is an ordinary
// candidate even when pinned: it answered the query.
func (r *Recaller) candidates(ctx context.Context, query string, route *engram.Route, req engram.RecallRequest) ([]Candidate, []string, error) {
	limit := r.cfg.Candidates + r.cfg.Candidates/2
	hits, err := r.store.SearchMemories(ctx, engram.LexicalQuery{Text: query, AgentID: req.AgentID, Limit: limit, Expand: true, Concepts: r.cfg.Concepts})
	if err != nil {
		return nil, nil, err
	}
	best := ""
	if len(hits) > 0 {
		best = hits[0].Memory.ID
	}
	var reasons []string
	if r.dense != nil {
		var nearest []engram.LexicalHit
		if nearest, reasons = r.nearest(ctx, query, req.AgentID, limit); nearest != nil {
			hits = fuseMatch(fuse(hits, nearest, r.dense.cfg.Weight), hits, nearest, r.dense.cfg.AgreeFloor)
		}
	}
	routed := 0
	for _, h := range hits {
		if slices.Contains(route.Categories, h.Memory.Category) {
			routed++
		}
	}
	offRoute := 1.0
	if routed >= r.cfg.MinRouted {
		offRoute = r.cfg.OffRouteWeight
		kept := hits[:0]
		for _, h := range hits {
			if !slices.Contains(route.Categories, h.Memory.Category) {
				h.Score *= offRoute
			}
			if h.Score > 0 { // weight 0 drops off-route hits
				kept = append(kept, h)
			}
		}
		hits = kept
		slices.SortStableFunc(hits, func(a, b engram.LexicalHit) int { return cmpFloat(b.Score, a.Score) })
	}
	if len(hits) > r.cfg.Candidates {
		hits = hits[:r.cfg.Candidates]
	}
	top := 0.0
	for _, h := range hits {
		top = math.Max(top, h.Score)
	}
	pinned, err := r.store.PinnedMemories(ctx, req.AgentID, r.cfg.Pinned)
	if err != nil {
		return nil, nil, err
	}
	hitOf := make(map[string]engram.LexicalHit, len(hits))
	for _, h := range hits {
		hitOf[h.Memory.ID] = h
	}
	seen := map[string]bool{}
	out := make([]Candidate, 0, len(hits)+len(pinned))
	add := func(m *engram.Memory, h engram.LexicalHit, pinned bool) {
		if seen[m.ID] {
			return
		}
		seen[m.ID] = true
		rel := 0.0
		if top > 0 {
			rel = h.Score / top
		}
		b := r.scorer.Score(m, rel*tagLift(m.Tags, req.Tags))
		b.Match, b.Pinned, b.Concept = unit(h.Match), pinned, h.Concept
		out = append(out, Candidate{Memory: m, Breakdown: b, Group: InjectionGroup(m, b)})
	}
	for _, m := range pinned {
		if m.ID != best {
			add(m, hitOf[m.ID], true)
		}
	}
	for _, h := range hits {
		add(h.Memory, h, false)
	}
	named := namedSpeakers(query, out)
	readSpeakers(out, named)
	if req.Hops != nil {
		if out, err = r.hop(ctx, out, *req.Hops, req.AgentID, cmp.Or(req.UserID, engram.UserFromContext(ctx))); err != nil { // MCP sets only the context's user
			return nil, nil, err
		}
		readSpeakers(out, named)
	}
	if err := r.helpful(ctx, out); err != nil {
		return nil, nil, err
	}
	r.supersede(out)
	if slices.Contains(route.Layers, engram.LayerL3) {
		refl, err := r.reflectionCandidates(ctx, query)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, refl...)
	}
	return out, reasons, nil
}

// nearest embeds the query and returns the closest memories, or nil and
// the reason the recall stays lexical.
func (r *Recaller) nearest(ctx context.Context, query, agentID string, limit int) ([]engram.LexicalHit, []string) {
	ectx, cancel := context.WithTimeout(ctx, r.dense.cfg.Timeout)
	defer cancel()
	vecs, err := r.dense.e.Embed(ectx, []string{query})
	var netErr net.Error
	switch {
	case errors.Is(ectx.Err(), context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return nil, []string{"embeddings_timeout"}
	case err != nil:
		return nil, []string{"embeddings_error"}
	}
	hits, err := r.dense.vs.VectorSearch(ctx, r.dense.e.Model(), vecs[0], agentID, limit)
	if err != nil {
		return nil, []string{"vector_search_error"}
	}
	return hits, nil
}

// fuse merges the lexical hits with the nearest memories by a convex
// combination of their normalised scores: (1 − w) × the lexical score
// over the best lexical score plus w × the cosine's place between the
// last and the first of the nearest, (cos − last) / (first − last). A
// memory missing from one list takes 0 of it. The lexical hit's match
// and concept are kept. Best first, ties by id.
func fuse(lexical, nearest []engram.LexicalHit, w float64) []engram.LexicalHit {
	byID := make(map[string]engram.LexicalHit, len(lexical)+len(nearest))
	score := make(map[string]float64, len(lexical)+len(nearest))
	if len(lexical) > 0 && lexical[0].Score > 0 {
		for _, h := range lexical {
			byID[h.Memory.ID] = h
			score[h.Memory.ID] = (1 - w) * h.Score / lexical[0].Score
		}
	}
	if n := len(nearest); n > 0 {
		first, last := nearest[0].Score, nearest[n-1].Score
		for _, h := range nearest {
			if _, ok := byID[h.Memory.ID]; !ok {
				byID[h.Memory.ID] = engram.LexicalHit{Memory: h.Memory}
			}
			if first > last {
				score[h.Memory.ID] += w * (h.Score - last) / (first - last)
			} else {
				score[h.Memory.ID] += w
			}
		}
	}
	out := make([]engram.LexicalHit, 0, len(byID))
	for id, h := range byID {
		h.Score = score[id]
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b engram.LexicalHit) int {
		if c := cmpFloat(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.Memory.ID, b.Memory.ID)
	})
	return out
}

func tagLift(have, want []string) float64 {
	if len(want) == 0 {
		return 1
	}
	found := 0
	for _, t := range want {
		if slices.Contains(have, t) {
			found++
		}
	}
	return 0.8 + 0.2*float64(found)/float64(len(want))
}

// ReadBlock renders the default read block of /v1/context: Header, then
// "- key type text" lines, newest first, then by importance, then by how
// many of tags a memory carries, within limit tokens.
func (r *Recaller) ReadBlock(ctx context.Context, agentID string, tags []string, limit int) (string, []engram.RecallItem, int, error) {
	if err := engram.CheckBudget("token_limit", limit, r.cfg.MaxBudget); err != nil {
		return "", nil, 0, err
	}
	ms, err := r.store.RecentMemories(ctx, agentID, r.cfg.ContextWindow)
	if err != nil {
		return "", nil, 0, err
	}
	slices.SortStableFunc(ms, func(a, b *engram.Memory) int {
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return b.CreatedAt.Compare(a.CreatedAt)
		}
		if a.Importance != b.Importance {
			return cmpFloat(b.Importance, a.Importance)
		}
		return tagOverlap(b.Tags, tags) - tagOverlap(a.Tags, tags)
	})
	cands := make([]Candidate, len(ms))
	for i, m := range ms {
		// One group, scores falling with the order above: Pack keeps it.
		cands[i] = Candidate{Memory: m, Breakdown: engram.ScoreBreakdown{Score: 1 - float64(i)/float64(len(ms))}, Group: GroupPreference}
	}
	text, items, used := r.packer.Pack(cands, limit, ContextLine)
	if items == nil {
		items = []engram.RecallItem{}
	}
	return text, items, used, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func tagOverlap(have, want []string) int {
	n := 0
	for _, t := range want {
		if slices.Contains(have, t) {
			n++
		}
	}
	return n
}

// persona returns the agent's persona: the memory at
// /agents/<agent_id>/persona, else at PersonaKey, whichever the agent may
// see first (a persona private to another agent is not its own, an
// archived one is retired); nil
// when there is none.
func (r *Recaller) persona(ctx context.Context, agentID string) (*engram.Memory, error) {
	keys := []string{PersonaKey}
	if agentID != "" && !strings.Contains(agentID, "/") {
		keys = append([]string{"/agents/" + agentID + "/persona"}, keys...)
	}
	for _, key := range keys {
		m, err := r.store.FindMemoryByKey(ctx, key)
		switch {
		case engram.ErrorCode(err) == engram.ENOTFOUND:
		case err != nil && engram.ErrorCode(err) != engram.EINVALID:
			return nil, err
		case err == nil && !m.Archived && (m.AgentID == "" || m.AgentID == agentID):
			return m, nil
		}
	}
	return nil, nil
}

// Boot returns the persona (see persona) and the
// pinned memories, rendered within limit tokens: the persona as a
// P0 line first, then the identity memories.
func (r *Recaller) Boot(ctx context.Context, agentID string, limit int) (*engram.Boot, error) {
	if err := engram.CheckBudget("token_limit", limit, r.cfg.MaxBudget); err != nil {
		return nil, err
	}
	pinned, err := r.store.PinnedMemories(ctx, agentID, r.cfg.Pinned)
	if err != nil {
		return nil, err
	}
	b := &engram.Boot{Memories: pinned}
	cands := make([]Candidate, 0, len(pinned)+1)
	persona, err := r.persona(ctx, agentID)
	if err != nil {
		return nil, err
	}
	if persona != nil {
		b.Persona = persona.Content
		cands = append(cands, Candidate{Memory: persona, Breakdown: engram.ScoreBreakdown{Score: 2}})
	}
	for i, m := range pinned {
		if persona != nil && m.ID == persona.ID {
			continue
		}
		cands = append(cands, Candidate{Memory: m, Breakdown: engram.ScoreBreakdown{Score: 1 - float64(i)/float64(len(pinned)+1)}})
	}
	b.Context, _, b.TokensUsed = r.packer.Pack(cands, limit, RecallLine)
	if b.Memories == nil {
		b.Memories = []*engram.Memory{}
	}
	return b, nil
}
