package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestQuarantineRelease: the memories page filters the quarantined, a
// quarantined memory's page names the gate's rule and offers Release (in
// English and Chinese), which lets it into recall as a new version; a
// release without the form's token, over a newer version, of a memory
// that is not quarantined, or of another tenant's memory changes nothing.
func TestQuarantineRelease(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		secret, _ := e.key(t, "acme")
		ctx := e.ctx(t, "acme")
		mk := func(m *engram.Memory) *engram.Memory {
			res, err := e.db.CreateMemory(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			return res.Memory
		}
		thanks := mk(&engram.Memory{Content: "Thanks, sounds good!", Category: "life", Quarantined: true})
		meeting := mk(&engram.Memory{Content: "昨天用户把会议改到了下午。", Category: "work", Quarantined: true})
		plain := mk(&engram.Memory{Content: "Maya Ruiz moved to Lisbon in March 2026", Category: "life"})
		c := e.client(t)
		csrf := c.signIn(secret)

		list := c.get("/console/memories?quarantined=true")
		if list.Status != http.StatusOK || !strings.Contains(list.Body, thanks.ID) || !strings.Contains(list.Body, meeting.ID) ||
			strings.Contains(list.Body, plain.ID) || !strings.Contains(list.Body, `id="filter-quarantined" checked`) {
			t.Fatalf("quarantined filter: %d %.600s", list.Status, list.Body)
		}
		if all := c.get("/console/memories"); strings.Contains(all.Body, thanks.ID) || !strings.Contains(all.Body, plain.ID) {
			t.Error("the unfiltered list shows a quarantined memory (archived) or misses a live one")
		}

		held := c.get("/console/memories/" + thanks.ID)
		for _, want := range []string{`id="quarantine"`, `id="gate-rule"`, "durable:", `id="release"`, ">Release<"} {
			if !strings.Contains(held.Body, want) {
				t.Errorf("the quarantined memory's page lacks %q", want)
			}
		}
		if p := c.get("/console/memories/" + plain.ID); strings.Contains(p.Body, `id="release"`) || strings.Contains(p.Body, `id="quarantine"`) {
			t.Error("a memory that is not quarantined shows the release button")
		}
		c.get("/console/lang?to=zh&next=/console/")
		zh := c.get("/console/memories/" + meeting.ID)
		for _, want := range []string{"被写入闸门拦下", "self_contained:", "昨天", ">放行<"} {
			if !strings.Contains(zh.Body, want) {
				t.Errorf("the Chinese page lacks %q", want)
			}
		}
		c.get("/console/lang?to=en&next=/console/")

		version := func(id string) *engram.Memory {
			t.Helper()
			m, err := e.db.FindMemoryByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		release := func(id string, form url.Values) *page { return c.post("/console/memories/"+id+"/release", form) }
		cur := strconv.FormatInt(thanks.Version, 10)
		if r := release(thanks.ID, url.Values{"current": {cur}}); r.Status != http.StatusForbidden {
			t.Errorf("release without the CSRF token: %d", r.Status)
		}
		if r := release(thanks.ID, url.Values{"csrf": {csrf}, "current": {"7"}}); r.Status != http.StatusConflict || !strings.Contains(r.Body, `id="edit-error"`) {
			t.Errorf("release over a newer version: %d", r.Status)
		}
		if r := release(thanks.ID, url.Values{"csrf": {csrf}}); r.Status != http.StatusBadRequest {
			t.Errorf("release without the version shown: %d", r.Status)
		}
		if m := version(thanks.ID); !m.Quarantined || !m.Archived || m.Version != thanks.Version {
			t.Fatalf("refused releases changed the memory: %+v", m)
		}

		r := release(thanks.ID, url.Values{"csrf": {csrf}, "current": {cur}})
		if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/console/memories/"+thanks.ID+"?done=released" {
			t.Fatalf("release: %d %s %.300s", r.Status, r.Header.Get("Location"), r.Body)
		}
		got := version(thanks.ID)
		if got.Quarantined || got.Archived || got.Version != thanks.Version+1 {
			t.Fatalf("released memory: quarantined %v archived %v v%d", got.Quarantined, got.Archived, got.Version)
		}
		done := c.get(r.Header.Get("Location"))
		if !strings.Contains(done.Body, "Released") || strings.Contains(done.Body, `id="release"`) {
			t.Error("the released memory's page still offers release or says nothing")
		}
		if l := c.get("/console/memories?quarantined=true"); strings.Contains(l.Body, thanks.ID) || !strings.Contains(l.Body, meeting.ID) {
			t.Error("the quarantined filter still lists the released memory")
		}

		again := release(thanks.ID, url.Values{"csrf": {csrf}, "current": {strconv.FormatInt(got.Version, 10)}})
		if again.Status != http.StatusConflict || !strings.Contains(again.Body, "not quarantined") {
			t.Errorf("release of a memory that is not quarantined: %d %.300s", again.Status, again.Body)
		}
		if m := version(thanks.ID); m.Version != got.Version {
			t.Errorf("a refused release made version %d", m.Version)
		}
		if r := release("mem_nosuch", url.Values{"csrf": {csrf}, "current": {"1"}}); r.Status != http.StatusNotFound {
			t.Errorf("release of an unknown memory: %d", r.Status)
		}

		other, _ := e.key(t, "globex")
		o := e.client(t)
		ocsrf := o.signIn(other)
		if r := o.post("/console/memories/"+meeting.ID+"/release", url.Values{"csrf": {ocsrf}, "current": {"1"}}); r.Status != http.StatusNotFound {
			t.Errorf("another tenant's release: %d", r.Status)
		}
		if m := version(meeting.ID); !m.Quarantined {
			t.Error("another tenant released the memory")
		}
	})
}
