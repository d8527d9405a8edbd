package reflections_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/reflections"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

func mem(id, category, sub string, tags ...string) *engram.Memory {
	return &engram.Memory{ID: id, Category: category, Subcategory: sub, Tags: tags, Content: "memory " + id, Version: 1,
		CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func TestGroupMemories(t *testing.T) {
	ms := []*engram.Memory{
		mem("a1", "work", "falcon"), mem("a2", "work", "falcon"), mem("a3", "work", "falcon", "ops"),
		mem("b1", "work", "", "ops"), mem("b2", "work", "", "ops", "x"), mem("b3", "work", "billing", "ops"),
		mem("c1", "work", ""), mem("c2", "work", "", "x"), mem("c3", "work", "", "y"),
		mem("d1", "life", "", "x"), mem("d2", "life", ""),
	}
	got := map[string][]string{}
	for _, g := range reflections.GroupMemories(ms, 3) {
		for _, m := range g.Members {
			got[g.Key] = append(got[g.Key], m.ID)
		}
	}
	want := map[string][]string{"work/falcon": {"a1", "a2", "a3"}, "work#ops": {"b1", "b2", "b3"}, "work": {"c1", "c2", "c3"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("groups %v, want %v (life has 2 members: no group)", got, want)
	}
	g := reflections.Group{Category: "work", Tag: "Caroline Smith"}
	if s := g.Slug(); !regexp.MustCompile(`^tag-caroline-smith-[0-9a-f]{8}$`).MatchString(s) {
		t.Errorf("slug %q", s)
	}
	for _, tag := range []string{"..", "../../etc", "a/b", "\u200b", strings.Repeat("长", 200)} {
		s := (reflections.Group{Category: "work", Tag: tag}).Slug()
		if strings.ContainsAny(s, `/\`) || s == "tag-" || len(s) > 100 || strings.Contains(s, "..") {
			t.Errorf("tag %q: unsafe slug %q", tag, s)
		}
	}
	if a, b := (reflections.Group{Tag: "ops"}).Slug(), (reflections.Group{Tag: "Ops"}).Slug(); a == b {
		t.Errorf("tags ops and Ops share the file %q", a)
	}
}

// TestExtractContradictions: two memories of one subject that say
// different things are listed, the newer first.
func TestExtractContradictions(t *testing.T) {
	old, young := mem("m_old", "life", ""), mem("m_new", "life", "")
	old.Content, young.Content = "The dentist appointment is on Tuesday at 10", "The dentist appointment is on Thursday at 10"
	old.ReinforcedAt, young.ReinforcedAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	other := mem("m_x", "life", "")
	other.Content = "Bought a new bicycle helmet"
	md, cited := reflections.Extract(reflections.Group{Key: "life", Category: "life", Members: []*engram.Memory{old, young, other}})
	section := md[strings.Index(md, "## Contradictions"):strings.Index(md, "## Open questions")]
	if !strings.Contains(section, "Newest: The dentist appointment is on Thursday") || strings.Index(section, "m_new") > strings.Index(section, "m_old") {
		t.Fatalf("contradictions:\n%s", section)
	}
	if len(cited) != 3 {
		t.Errorf("cited %v", cited)
	}
}

// chatEnv is a tenant with one group of memories and a reflector whose
// chat endpoint answers as answer says.
func chatEnv(t *testing.T, answer func(w http.ResponseWriter, ids []string)) (context.Context, *reflections.Service, []string) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "acme")
	var ids []string
	for _, c := range []string{"Ships on Fridays", "Standup at 9:30", "Retro every other Thursday"} {
		res, err := db.CreateMemory(ctx, &engram.Memory{Content: c, Category: "work"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Memory.ID)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct{ Role, Content string }
		}
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" ||
			json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "m" || len(req.Messages) != 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		answer(w, ids)
	}))
	t.Cleanup(srv.Close)
	svc := reflections.New(db, reflections.Config{Categories: engram.DefaultCategories, MinGroup: 3,
		Chat: reflections.NewChat(srv.URL+"/v1", "m", "sk-test", 200*time.Millisecond)}, nil)
	return ctx, svc, ids
}

func chatAnswer(w http.ResponseWriter, content string) {
	_ = json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"message": map[string]string{"role": "assistant", "content": content}}}})
}

func goodReflection(ids []string) string {
	return fmt.Sprintf(`# Work
## What is known
| when | what |
|---|---|
| Friday | ships [%s] |
- [x] standup at 9:30 [%s] <script>alert(1)</script>
## What worked
None recorded.
## What failed or misled
None recorded.
## Contradictions
None recorded.
## Open questions
- Is the retro still biweekly? [%s]
`, ids[0], ids[1], ids[2])
}

func TestChatWriter(t *testing.T) {
	ctx, svc, ids := chatEnv(t, func(w http.ResponseWriter, ids []string) { chatAnswer(w, goodReflection(ids)) })
	res, err := svc.Reflect(ctx, engram.ReflectRequest{})
	if err != nil || len(res.Written) != 1 || res.Written[0].Writer != "chat:m" || res.Written[0].Reason != "" {
		t.Fatalf("chat reflection: %+v %v", res, err)
	}
	r, err := svc.FindReflectionByID(ctx, res.Written[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.HTML, "<table>") || !strings.Contains(r.HTML, `type="checkbox"`) || strings.Contains(r.HTML, "<script") ||
		!strings.Contains(r.HTML, `href="/console/memories/`+ids[0]+`"`) || len(r.Cited) != 3 {
		t.Fatalf("rendered:\n%s\ncited %v", r.HTML, r.Cited)
	}
	if again, _ := svc.Reflect(ctx, engram.ReflectRequest{}); len(again.Written) != 0 || len(again.Skipped) != 1 {
		t.Fatalf("second run: %+v", again)
	}
}

// TestChatFallback: whatever goes wrong with the chat endpoint, the
// extractive writer's reflection is stored and the reason reported.
func TestChatFallback(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer func(w http.ResponseWriter, ids []string)
		reason string
	}{
		{"hangs", func(w http.ResponseWriter, ids []string) { time.Sleep(time.Second) }, "chat: timed out"},
		{"invalid JSON", func(w http.ResponseWriter, ids []string) { _, _ = w.Write([]byte(`{"choices":[`)) }, "not valid JSON"},
		{"server error", func(w http.ResponseWriter, ids []string) { http.Error(w, "boom", http.StatusInternalServerError) }, "status 500"},
		{"unknown citation", func(w http.ResponseWriter, ids []string) {
			chatAnswer(w, strings.Replace(goodReflection(ids), ids[2], "mem_aaaaaaaaaaaaaaaaaaaa", 1))
		}, "cites mem_aaaaaaaaaaaaaaaaaaaa, which is not in the group"},
		{"missing section", func(w http.ResponseWriter, ids []string) {
			chatAnswer(w, strings.Replace(goodReflection(ids), "## Contradictions", "## Conflicts", 1))
		}, `section "Contradictions" is missing`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, svc, _ := chatEnv(t, tt.answer)
			res, err := svc.Reflect(ctx, engram.ReflectRequest{})
			if err != nil || len(res.Written) != 1 || res.Written[0].Writer != "extractive" || !strings.Contains(res.Written[0].Reason, tt.reason) {
				t.Fatalf("fallback: %+v %v", res, err)
			}
			r, err := svc.FindReflectionByID(ctx, res.Written[0].ID)
			if err != nil || !strings.Contains(r.Markdown, "## What is known") || !strings.Contains(r.Fallback, tt.reason) {
				t.Fatalf("stored: %+v %v", r, err)
			}
			// Unchanged group, chat still failing: nothing new is written
			// and the reason is reported again.
			again, err := svc.Reflect(ctx, engram.ReflectRequest{})
			if err != nil || len(again.Written) != 0 || len(again.Skipped) != 1 || !strings.Contains(again.Skipped[0].Reason, tt.reason) {
				t.Fatalf("second run: %+v %v", again, err)
			}
		})
	}
}

var _ reflections.Store = (*store.DB)(nil)
