package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/engram-memory/engram"
)

// The knowledge benchmark: a tenant holds templated facts about many
// people who share first names, surnames, cities, pets and jobs, written
// one at a time from one source, then a quarter of the people change one
// attribute later. Half the people's facts are written after a label
// ("Maya Ruiz: Lives in Lisbon"), half as sentences ("Maya Ruiz lives in
// Lisbon"), one way per person. It measures whether the knowledge update of a recall
// tells people apart: a person's new value must outrank their stale one,
// a person who changed nothing must keep their own fact, and a name must
// bring that person's facts.

// KnowledgeOptions sets up one run of the knowledge benchmark.
type KnowledgeOptions struct {
	Entities int    // people in the tenant; every person has len(knowledgeAttrs) facts
	Queries  int    // recalls per figure (a sample of the people); 0 asks about everyone
	Seed     uint64 // draws the people, their facts and who changes
	Budget   int    // token budget of every recall; large, so ranking is measured
}

// KnowledgeResult holds the three figures of one recall service.
type KnowledgeResult struct {
	Name string
	// Updated is the share of changed people whose new fact ranks above
	// their stale one for the question about that attribute.
	Updated float64
	// Kept is the share of unchanged people whose city fact is in the
	// top 3 for "Where does <person> live?".
	Kept float64
	// NameAll is the share of people all of whose current facts rank in
	// the top len(knowledgeAttrs)+NameMargin for their full name.
	NameAll                      float64
	nUpdated, nKept, nName       int
	sumUpdated, sumKept, sumName int
}

// NameMargin is how many places beyond a person's fact count the name
// query may use: room for a stale fact and one other person's fact.
const NameMargin = 2

// knowledgeAttr is one templated attribute: the fact after a label
// ("Maya Ruiz: Lives in Lisbon"), the same fact as a sentence about the
// person ("Maya Ruiz lives in Lisbon"), the question that asks for it and
// the values it draws from.
type knowledgeAttr struct {
	fact, prose, question string
	values                []string
}

var knowledgeAttrs = []knowledgeAttr{
	{"Lives in %s", "%s lives in %s", "Where does %s live?", []string{"Lisbon", "Oslo", "Denver", "Austin", "Leeds", "Lyon", "Porto", "Dublin",
		"Boston", "Seattle", "Toronto", "Madrid", "Munich", "Vienna", "Prague", "Krakow", "Bristol", "Glasgow", "Chicago",
		"Phoenix", "Atlanta", "Portland", "Nairobi", "Lagos", "Accra", "Cairo", "Tunis", "Osaka", "Kyoto", "Seoul", "Busan",
		"Manila", "Hanoi", "Jakarta", "Perth", "Sydney", "Auckland", "Santiago", "Lima", "Bogota"}},
	{"Works as a %s", "%s works as a %s", "What does %s do for work?", []string{"baker", "nurse", "plumber", "teacher", "pilot", "chemist",
		"carpenter", "dentist", "librarian", "welder", "architect", "florist", "butcher", "surveyor", "paramedic",
		"translator", "journalist", "electrician", "gardener", "mechanic", "pharmacist", "optician", "tailor", "barber",
		"cartographer", "geologist", "locksmith", "jeweller", "veterinarian", "accountant"}},
	{"Has a dog named %s", "%s has a dog named %s", "What is the name of %s's dog?", []string{"Waffles", "Biscuit", "Pepper", "Maple", "Noodle",
		"Pickles", "Ziggy", "Bruno", "Rocket", "Mochi", "Olive", "Peanut", "Juniper", "Pumpkin", "Scout", "Cocoa", "Pretzel",
		"Hazel", "Tofu", "Nacho", "Ginger", "Clover", "Bingo", "Marble", "Sprout", "Truffle", "Banjo", "Dumpling", "Kiwi",
		"Paprika"}},
	{"Enjoys %s on weekends", "%s enjoys %s on weekends", "What does %s enjoy on weekends?", []string{"hiking", "chess", "pottery", "surfing", "baking",
		"cycling", "birdwatching", "knitting", "climbing", "fishing", "painting", "sailing", "running", "gardening",
		"skating", "archery", "rowing", "dancing", "juggling", "kayaking"}},
}

// changeable are the attributes a person may change (a hobby stays).
const changeable = 3

var knowledgeFirst = []string{"Maya", "Gavin", "Aisha", "Bruno", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro",
	"Ines", "Jonas", "Keira", "Liam", "Mira", "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Samir", "Tara", "Uma", "Viktor",
	"Wren", "Xavier", "Yara", "Zane", "Amara", "Boris", "Celia", "Diego", "Esme", "Felix", "Greta", "Hamza", "Ivy", "Jasper",
	"Kofi", "Lena", "Marco", "Nadia", "Omar", "Priya", "Rafael", "Sofia", "Tomas", "Ursula", "Vera", "Wesley", "Ximena",
	"Yusuf", "Zara", "Anton", "Bianca", "Cyrus", "Dalia", "Emil", "Fatima", "Gideon", "Hana", "Igor", "Jada", "Kenji", "Lucia",
	"Mateo", "Nora", "Oscar", "Petra", "Reza", "Selin", "Theo", "Anya", "Benedict", "Carmen", "Darius", "Edith", "Florin",
	"Gemma", "Hugo", "Ida", "Julian", "Kira", "Leon", "Magnus", "Nell", "Orla", "Pavel", "Rhea", "Stellan", "Tamsin", "Ulrich",
	"Vivian", "Willa", "Yosef", "Zofia", "Arjun", "Bettina", "Caspar", "Delphine", "Ezra", "Freya", "Gustav", "Helena",
	"Isak", "Juno", "Kasimir", "Ludmila", "Milo", "Nina", "Otto", "Paloma", "Ronan", "Sunita", "Tobias", "Valeria", "Wilhelm",
	"Yasmin"}

var knowledgeLast = []string{"Ruiz", "Okafor", "Novak", "Larsen", "Moreau", "Tanaka", "Kowalski", "Haddad", "Fischer",
	"Silva", "Murphy", "Ivanova", "Nguyen", "Rossi", "Jensen", "Duarte", "Bauer", "Castillo", "Petrov", "Nakamura", "Olsen",
	"Mendes", "Keller", "Varga", "Lindqvist", "Mbeki", "Kaur", "Horvat", "Costa", "Schmidt", "Moretti", "Dubois", "Yilmaz",
	"Sato", "Herrera", "Popescu", "Brennan", "Abara", "Quint", "Falk", "Garrido", "Holm", "Iqbal", "Jovanovic", "Kato",
	"Lennox", "Marsh", "Nilsen", "Ortega", "Pike", "Reyes", "Strand", "Toivonen", "Ueda", "Vance", "Weber", "Xu", "Yates",
	"Zeller", "Adler", "Barros", "Cerny", "Dahl", "Eriksen", "Ferreira", "Grimaldi", "Hale", "Ito", "Janssen", "Kemp",
	"Lozano", "Molina", "Nash", "Oduya", "Pereira", "Quiroga", "Rahman", "Santos", "Thorne", "Ulloa", "Vidal", "Wolfe",
	"Yoon", "Zamora", "Arnaud", "Bjork", "Coelho", "Drake", "Engel", "Fonseca", "Gallo", "Hartmann", "Ibarra", "Juarez",
	"Kaplan", "Leclerc", "Mancini", "Navarro", "Ostrowski", "Pham"}

// knowledgeSource is the one source every fact is written with.
var knowledgeSource = json.RawMessage(`{"kind":"bench","name":"people"}`)

// person is one generated entity: a unique full name, how their facts
// are written (prose: as sentences, else after a label), the value index
// of each attribute, and the attribute it changes (−1: none) to what.
type person struct {
	name    string
	prose   bool
	values  []int
	changed int
	to      int
	facts   []string // memory ids of current facts, by attribute
	stale   string   // memory id of the replaced fact
}

// people draws opt.Entities unique full names with their facts, and
// picks a quarter of them to change one attribute.
func people(opt KnowledgeOptions) ([]*person, error) {
	total := len(knowledgeFirst) * len(knowledgeLast)
	if opt.Entities < 1 || opt.Entities > total {
		return nil, fmt.Errorf("bench knowledge: entities must be in [1, %d], got %d", total, opt.Entities)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x6b6e6f77))
	names := rng.Perm(total)[:opt.Entities]
	out := make([]*person, opt.Entities)
	for i, n := range names {
		p := &person{name: knowledgeFirst[n%len(knowledgeFirst)] + " " + knowledgeLast[n/len(knowledgeFirst)], changed: -1,
			prose: rng.IntN(2) == 1}
		for _, a := range knowledgeAttrs {
			p.values = append(p.values, rng.IntN(len(a.values)))
		}
		out[i] = p
	}
	for _, i := range rng.Perm(len(out))[:len(out)/4] {
		p := out[i]
		p.changed = rng.IntN(changeable)
		n := len(knowledgeAttrs[p.changed].values)
		p.to = (p.values[p.changed] + 1 + rng.IntN(n-1)) % n
	}
	return out, nil
}

func (p *person) fact(attr, value int) string {
	a := knowledgeAttrs[attr]
	if p.prose {
		return fmt.Sprintf(a.prose, p.name, a.values[value])
	}
	return p.name + ": " + fmt.Sprintf(a.fact, a.values[value])
}

// RunKnowledge writes the people's facts into a new tenant, one memory
// per write, each with an occurred_at a minute after the last; then the
// changed facts, a year later, in the same way. It then asks each
// recall service of recalls (in order) the three questions and returns
// their figures.
func RunKnowledge(ctx context.Context, svc Services, opt KnowledgeOptions, recalls []engram.RecallService, names []string, progress io.Writer) ([]*KnowledgeResult, error) {
	ps, err := people(opt)
	if err != nil {
		return nil, err
	}
	tctx, err := tenantCtx(ctx, svc.Auth, fmt.Sprintf("knowledge-%d-%d", opt.Entities, opt.Seed))
	if err != nil {
		return nil, err
	}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	write := func(content string) (string, error) {
		when := at
		at = at.Add(time.Minute)
		res, err := svc.Memories.CreateMemories(tctx, []*engram.Memory{{Content: content, Category: engram.CategoryLife,
			Type: "fact", Source: knowledgeSource, OccurredAt: &when}})
		if err != nil {
			return "", err
		}
		return res[0].Memory.ID, nil
	}
	start := time.Now()
	for _, p := range ps {
		for a, v := range p.values {
			id, err := write(p.fact(a, v))
			if err != nil {
				return nil, err
			}
			p.facts = append(p.facts, id)
		}
	}
	at = at.AddDate(1, 0, 0)
	for _, p := range ps {
		if p.changed < 0 {
			continue
		}
		id, err := write(p.fact(p.changed, p.to))
		if err != nil {
			return nil, err
		}
		p.stale, p.facts[p.changed] = p.facts[p.changed], id
	}
	fmt.Fprintf(progress, "knowledge: %d people, %d facts written in %.1fs\n", len(ps), len(ps)*len(knowledgeAttrs)+len(ps)/4,
		time.Since(start).Seconds())
	sample := func(keep func(*person) bool) []*person {
		var out []*person
		for _, p := range ps {
			if keep(p) {
				out = append(out, p)
			}
		}
		rng := rand.New(rand.NewPCG(opt.Seed, 0x71756573))
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		if opt.Queries > 0 && len(out) > opt.Queries {
			out = out[:opt.Queries]
		}
		return out
	}
	changed := sample(func(p *person) bool { return p.changed >= 0 })
	unchanged := sample(func(p *person) bool { return p.changed < 0 })
	everyone := sample(func(*person) bool { return true })
	var out []*KnowledgeResult
	for i, rs := range recalls {
		res := &KnowledgeResult{Name: names[i]}
		rank := func(q string) (map[string]int, error) {
			rec, err := rs.Recall(tctx, engram.RecallRequest{Query: q, TokenBudget: opt.Budget, Fill: true})
			if err != nil {
				return nil, fmt.Errorf("recall %q: %w", q, err)
			}
			items := append([]engram.RecallItem(nil), rec.Items...)
			sort.SliceStable(items, func(i, j int) bool { return items[i].Score > items[j].Score })
			at := map[string]int{}
			for r, it := range items {
				at[it.ID] = r
			}
			return at, nil
		}
		for _, p := range changed {
			at, err := rank(fmt.Sprintf(knowledgeAttrs[p.changed].question, p.name))
			if err != nil {
				return nil, err
			}
			res.nUpdated++
			if n, ok := at[p.facts[p.changed]]; ok {
				if s, ok := at[p.stale]; !ok || n < s {
					res.sumUpdated++
				}
			}
		}
		for _, p := range unchanged {
			at, err := rank(fmt.Sprintf(knowledgeAttrs[0].question, p.name))
			if err != nil {
				return nil, err
			}
			res.nKept++
			if n, ok := at[p.facts[0]]; ok && n < 3 {
				res.sumKept++
			}
		}
		for _, p := range everyone {
			at, err := rank(p.name)
			if err != nil {
				return nil, err
			}
			res.nName++
			all := true
			for _, id := range p.facts {
				if n, ok := at[id]; !ok || n >= len(p.facts)+NameMargin {
					all = false
				}
			}
			if all {
				res.sumName++
			}
		}
		res.Updated = float64(res.sumUpdated) / float64(max(res.nUpdated, 1))
		res.Kept = float64(res.sumKept) / float64(max(res.nKept, 1))
		res.NameAll = float64(res.sumName) / float64(max(res.nName, 1))
		out = append(out, res)
	}
	return out, nil
}

// PrintKnowledge writes the figures as a Markdown table.
func PrintKnowledge(w io.Writer, opt KnowledgeOptions, rs []*KnowledgeResult) {
	fmt.Fprintf(w, "engram bench knowledge: %d people, %d facts each, a quarter change one attribute; seed %d\n\n",
		opt.Entities, len(knowledgeAttrs), opt.Seed)
	var rows [][]string
	for _, r := range rs {
		rows = append(rows, []string{r.Name, fmt.Sprintf("%s (%d)", f3(r.Updated), r.nUpdated),
			fmt.Sprintf("%s (%d)", f3(r.Kept), r.nKept), fmt.Sprintf("%s (%d)", f3(r.NameAll), r.nName)})
	}
	table(w, []string{"recall", "new value above stale", "unchanged city in top 3", fmt.Sprintf("all facts in top facts+%d", NameMargin)}, rows)
}
