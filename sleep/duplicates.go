package sleep

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// maxCandidates bounds the memories one term proposes as near duplicates.
const maxCandidates = 2000

// nearDuplicates pairs memories of one category, agent, end user and
// security level, without keys, whose terms overlap by at least sim: (keep, drop), each memory in at
// most one pair. The one kept has the better record (up minus down
// votes), then is the older. Candidates come from each memory's three
// rarest terms, so the work grows with the memories, not their square: a
// pair at 0.9 overlap shares nearly every term, the rare ones included.
// A memory whose rarest terms are each held by more than maxCandidates
// memories is not paired: the search is approximate by design.
func nearDuplicates(ms []*engram.Memory, sim float64) [][2]*engram.Memory {
	if sim <= 0 || sim > 1 {
		return nil
	}
	// Merging moves the dropped memory's tags and provenance into the kept
	// one and deletes it: across end users it would hand one user's memory
	// to another, across levels carry a secret's tags to a lower level.
	type bucketKey struct{ category, agent, user, level string }
	buckets := map[bucketKey][]*engram.Memory{}
	for _, m := range ms {
		if m.Key == "" {
			k := bucketKey{m.Category, m.AgentID, m.UserID, m.SecurityLevel}
			buckets[k] = append(buckets[k], m)
		}
	}
	keys := make([]bucketKey, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b bucketKey) int {
		return cmp.Or(strings.Compare(a.category, b.category), strings.Compare(a.agent, b.agent),
			strings.Compare(a.user, b.user), strings.Compare(a.level, b.level))
	})
	var out [][2]*engram.Memory
	for _, k := range keys {
		list := buckets[k]
		// Oldest first (then by id), so that of two duplicates with the
		// same record the older is kept.
		slices.SortStableFunc(list, func(a, b *engram.Memory) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
		})
		terms := make([][]string, len(list))
		postings := map[string][]int{}
		for i, m := range list {
			terms[i] = analysis.UniqueTerms(m.Content + "\n" + m.Summary)
			for _, t := range terms[i] {
				postings[t] = append(postings[t], i)
			}
		}
		paired := make([]bool, len(list))
		for i := range list {
			if paired[i] || len(terms[i]) == 0 {
				continue
			}
			rare := append([]string(nil), terms[i]...)
			sort.SliceStable(rare, func(a, b int) bool { return len(postings[rare[a]]) < len(postings[rare[b]]) })
			seen := map[int]bool{}
			for _, t := range rare[:min(3, len(rare))] {
				if len(postings[t]) > maxCandidates {
					break // even its rarest terms are common: too generic to pair cheaply
				}
				for _, j := range postings[t] {
					if j <= i || paired[j] || seen[j] {
						continue
					}
					seen[j] = true
					shared, onlyA, onlyB := analysis.Overlap(terms[i], terms[j])
					if float64(shared)/float64(shared+onlyA+onlyB) < sim {
						continue
					}
					keep, drop := list[i], list[j]
					if drop.UpCount-drop.DownCount > keep.UpCount-keep.DownCount {
						keep, drop = drop, keep
					}
					out = append(out, [2]*engram.Memory{keep, drop})
					paired[i], paired[j] = true, true
					break
				}
				if paired[i] {
					break
				}
			}
		}
	}
	return out
}
