package mcp

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
)

type aliasArgs struct {
	UserID string `json:"user_id,omitempty" jsonschema:"the end user whose key and alias these are; omit for shared"`
	Alias  string `json:"alias" jsonschema:"the other key path, e.g. /user/cat"`
	Key    string `json:"key,omitempty" jsonschema:"the live key the alias names, e.g. /user/pet (not itself an alias)"`
	Remove bool   `json:"remove,omitempty" jsonschema:"remove the alias instead"`
}

type aliasResult struct {
	Alias   *engram.Alias   `json:"alias" jsonschema:"the alias made, or removed"`
	Aliases []*engram.Alias `json:"aliases" jsonschema:"every alias of the target memory afterwards"`
}

// addAlias adds the alias tool when the server has an alias store.
func (b *toolbox) addAlias() {
	aliases := b.s.cfg.Aliases
	if aliases == nil {
		return
	}
	addTool(b, &sdk.Tool{
		Name: "alias",
		Description: "Give a keyed memory another key path, or remove one: set_memory and forget on the alias then act " +
			"on the memory at key (e.g. /user/cat for /user/pet). No alias of an alias; an alias may not hide a live key.",
		Annotations: &sdk.ToolAnnotations{Title: "Alias a key", IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, func(s *jsonschema.Schema) {
		s.Required = []string{"alias"}
	}, func(ctx context.Context, a *aliasArgs) (*aliasResult, error) {
		var res aliasResult
		var err error
		switch {
		case a.Remove:
			res.Alias, err = aliases.DeleteAlias(ctx, a.Alias)
		case a.Key == "":
			return nil, engram.Errorf(engram.EINVALID, "key is required: the key the alias names (or remove: true)")
		default:
			res.Alias, err = aliases.SetAlias(ctx, a.Alias, a.Key)
		}
		if err != nil {
			return nil, err
		}
		if res.Aliases, err = aliases.FindAliases(ctx, res.Alias.MemoryID); err != nil {
			return nil, err
		}
		return &res, nil
	})
}
