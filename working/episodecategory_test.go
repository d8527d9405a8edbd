package working

import (
	"testing"

	"github.com/engram-memory/engram"
)

// route is a router's answer with domains best first, the rest tied.
func route(best ...string) *engram.Route {
	r := &engram.Route{}
	for i, d := range best {
		r.Domains = append(r.Domains, engram.DomainScore{Name: d, Score: 0.5 / float64(i+1)})
	}
	return r
}

// TestEpisodeCategory: an episode is a preference only when the user's
// side states one, in English or Chinese; an assistant's or system's
// message, a question, an offer or a greeting falls back to the router's
// best other domain, and an aspect the router found (emotion) stays.
func TestEpisodeCategory(t *testing.T) {
	pref, work, life, emotion := engram.CategoryPreference, engram.CategoryWork, engram.CategoryLife, engram.CategoryEmotion
	for _, tt := range []struct {
		role, speaker, content string
		route                  *engram.Route
		want                   string
	}{
		{"assistant", "", "Budget per night, and do you want dinner included?", route(pref, life, work), life},
		{"assistant", "", "I prefer to confirm bookings by email.", route(pref, work), work},
		{"system", "", "The user likes spicy food.", route(pref, life), life},
		{"", "Assistant", "Would you like me to book a table?", route(pref, work, life), work},
		{"assistant", "", "你喜欢吃辣吗？", route(pref, life), life},
		{"user", "", "I prefer aisle seats", route(pref, life), pref},
		{"user", "", "I prefer aisle seats on long flights", route(life, pref), pref},
		{"user", "", "我不吃辣", route(pref, life), pref},
		{"user", "", "我平时不吃辣，出差也一样", route(work, pref), pref},
		{"user", "", "我对花生过敏", route(life), pref},
		{"user", "", "My favourite airline is KLM.", route(work, pref), pref},
		{"user", "", "Window seat, please", route(pref, life), pref},
		{"user", "", "I'd rather not take red-eye flights.", route(life), pref},
		{"user", "", "Do you like jazz?", route(pref, life), life},
		{"user", "", "Do you like jazz", route(pref, life), life},
		{"user", "", "Do not book red-eye flights", route(pref, life), pref},
		{"user", "", "你喜不喜欢川菜", route(pref, life), life},
		{"user", "", "Hi!", route(pref, work), work},
		{"user", "", "Thanks so much", route(pref), life},
		{"user", "", "I love it!", route(life), life},
		{"user", "", "I prefer aisle seats. Can you book one?", route(work), pref},
		{"user", "", "我不吃辣，你们有清淡的吗？", route(pref, life), pref},
		{"user", "", "Budget per night, and do you want dinner included?", route(pref, life), life},
		{"user", "", "I hate my job, I feel so stressed", route(emotion, pref, work), emotion},
		{"user", "", "The meeting moved to Thursday", route(work, pref), work},
		{"", "Caroline", "I love painting sunsets by the lake", route(pref, life), pref},
		{"", "Caroline", "You know I love live music", route(life, pref), life},
		{"human", "", "I usually fly with KLM", route(work, pref), pref},
		{"", "Melanie", "What did the support group feel like?", route(pref, life), life},
	} {
		e := &engram.SessionEvent{Type: engram.EventMessage, Role: tt.role, Speaker: tt.speaker, Content: tt.content}
		if got := EpisodeCategory(e, tt.route); got != tt.want {
			t.Errorf("%s%s %q routed %v: %q, want %q", tt.role, tt.speaker, tt.content, tt.route.Domains, got, tt.want)
		}
	}
	if got := EpisodeCategory(&engram.SessionEvent{Role: "user", Content: "x"}, &engram.Route{}); got != "" {
		t.Errorf("no domains: %q, want none", got)
	}
}
