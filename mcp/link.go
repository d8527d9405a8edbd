package mcp

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

type linkArgs struct {
	From     string `json:"from" jsonschema:"id of the memory the link starts from"`
	To       string `json:"to" jsonschema:"id of the memory it points at"`
	Relation string `json:"relation,omitempty" jsonschema:"how from relates to to: related (default), answers, mentions, corrects, supports, contradicts, part_of, follows, same_entity, or a few words of your own"`
	Remove   bool   `json:"remove,omitempty" jsonschema:"remove the link instead (without relation: every relation between the two)"`
}

type linkResult struct {
	Link    *engram.Link   `json:"link,omitempty" jsonschema:"the link made"`
	Removed []*engram.Link `json:"removed,omitempty" jsonschema:"the links removed"`
	Links   []*engram.Link `json:"links" jsonschema:"the live links of from afterwards, both directions"`
}

// addLink adds the link tool when the memory service stores links.
func (b *toolbox) addLink() {
	links, ok := b.s.cfg.Memories.(engram.LinkService)
	if !ok {
		return
	}
	addTool(b, &sdk.Tool{
		Name: "link",
		Description: "Link one memory to another with a relation, or remove a link. Use it when a memory only makes " +
			"sense with another (\"she only eats salmon kibble\" → the memory introducing the cat), answers or corrects " +
			"another: recall with hops then brings the linked memory along.",
		Annotations: &sdk.ToolAnnotations{Title: "Link memories", IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, func(s *jsonschema.Schema) {
		s.Required = []string{"from", "to"}
	}, func(ctx context.Context, a *linkArgs) (*linkResult, error) {
		if a.From == "" || a.To == "" {
			return nil, engram.Errorf(engram.EINVALID, "from and to are required: memory ids")
		}
		from, to := wire.MemoryID(a.From), wire.MemoryID(a.To)
		var res linkResult
		var err error
		if a.Remove {
			res.Removed, err = links.DeleteLink(ctx, from, to, a.Relation)
		} else {
			res.Link, err = links.CreateLink(ctx, engram.Link{From: from, To: to, Relation: a.Relation})
		}
		if err != nil {
			return nil, err
		}
		if res.Links, err = links.FindLinks(ctx, from); err != nil {
			return nil, err
		}
		return &res, nil
	})
}
