package clearance

import (
	"context"
	"slices"
	"strings"

	"github.com/engram-memory/engram"
)

// An L3 reflection quotes the memories it was written from, so it is as
// secret as the most secret of them, by their levels now: a member whose
// level was raised takes its reflection with it at once (and the next
// reflect rewrites the reflection, since the member's version moved).

// Levels returns the security levels of the tenant's memories among ids.
type Levels func(ctx context.Context, ids []string) (map[string]string, error)

// SeeReflections returns what the reader in ctx may see of rs: each
// reflection itself, a masked or redacted copy, or nothing (counted as
// withheld), by the highest level among its members and cited memories.
func SeeReflections(ctx context.Context, levels Levels, rs []*engram.Reflection) ([]*engram.Reflection, error) {
	r := engram.ReaderFromContext(ctx)
	if r == nil || len(rs) == 0 {
		return rs, nil
	}
	var ids []string
	for _, refl := range rs {
		for _, m := range slices.Concat(refl.Members, refl.Cited) {
			ids = append(ids, m.ID)
		}
	}
	lv, err := levels(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := rs[:0:0]
	for _, refl := range rs {
		level := engram.SecurityPublic
		for _, m := range slices.Concat(refl.Members, refl.Cited) {
			if l, ok := lv[m.ID]; ok && !engram.Cleared(level, l) {
				level = l
			}
		}
		switch {
		case !engram.Cleared(r.Clearance, level):
			r.CountWithheld()
			if r.Withhold != engram.WithholdMask {
				continue
			}
			c := *refl // a group key names a tag or subcategory
			c.Group, c.Title, c.Markdown, c.HTML = userPrefix(refl.Group)+MaskedText(level), MaskedText(level), MaskedText(level), ""
			out = append(out, &c)
		case r.MaskPII:
			c := *refl
			c.Title, c.Markdown, c.HTML = Redact(refl.Title), Redact(refl.Markdown), ""
			out = append(out, &c)
		default:
			out = append(out, refl)
		}
	}
	return out, nil
}

// SeeReflection is SeeReflections for one reflection read by id: ENOTFOUND
// when the reader may not see it.
func SeeReflection(ctx context.Context, levels Levels, refl *engram.Reflection, err error) (*engram.Reflection, error) {
	if err != nil {
		return nil, err
	}
	rs, err := SeeReflections(ctx, levels, []*engram.Reflection{refl})
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "reflection not found")
	}
	return rs[0], nil
}

// SeeOutcomes keeps of a reflect run's outcomes what the reader in ctx
// may see: an outcome names its group (a tag or subcategory), so one
// whose reflection find (a read through SeeReflection) does not return
// is left out, and one whose reflection comes back masked shows the
// masked group. An outcome with no reflection (a group that failed) has
// no known level: below clearance secret its group and reason are masked.
func SeeOutcomes(ctx context.Context, find func(context.Context, string) (*engram.Reflection, error), res *engram.ReflectResult) (*engram.ReflectResult, error) {
	r := engram.ReaderFromContext(ctx)
	if r == nil || res == nil || engram.Cleared(r.Clearance, engram.SecuritySecret) {
		return res, nil
	}
	see := func(os []engram.ReflectOutcome) ([]engram.ReflectOutcome, error) {
		out := os[:0:0]
		for _, o := range os {
			if o.ID == "" {
				if !engram.Cleared(r.Clearance, engram.SecuritySecret) {
					o.Group, o.Reason = userPrefix(o.Group)+MaskedText("unknown"), ""
				}
				out = append(out, o)
				continue
			}
			refl, err := find(ctx, o.ID)
			switch {
			case engram.ErrorCode(err) == engram.ENOTFOUND:
				continue
			case err != nil:
				return nil, err
			}
			o.Group = refl.Group
			out = append(out, o)
		}
		return out, nil
	}
	c := *res
	var err error
	if c.Written, err = see(res.Written); err != nil {
		return nil, err
	}
	if c.Skipped, err = see(res.Skipped); err != nil {
		return nil, err
	}
	if c.Failed, err = see(res.Failed); err != nil {
		return nil, err
	}
	return &c, nil
}

// userPrefix is the "@<user>/" an end user's group key opens with, or "":
// a masked group keeps whose it is, so that a door showing one user's
// groups (MCP reflect) can still leave out the others'.
func userPrefix(group string) string {
	if strings.HasPrefix(group, "@") {
		if i := strings.Index(group, "/"); i > 0 {
			return group[:i+1]
		}
	}
	return ""
}
