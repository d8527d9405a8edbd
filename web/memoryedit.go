package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/engram-memory/engram"
)

// The console's edits. Each posts the version the page showed (current),
// so that an edit over someone else's change fails (conflict) instead of
// overwriting it, and each makes a new version whose history names the
// console user's key as actor and whose source says it came from the
// console. A refusal shows the API's message on the memory page.

// consoleSource is the source an edited memory records.
func consoleSource(s *session) *json.RawMessage {
	raw := json.RawMessage(fmt.Sprintf(`{"via":"console","key_id":%q}`, s.KeyID))
	return &raw
}

// expected reads the form's current version (the one the page showed).
func expected(r *http.Request) (*int64, error) {
	v, err := strconv.ParseInt(r.PostFormValue("current"), 10, 64)
	if err != nil || v < 1 {
		return nil, engram.Errorf(engram.EINVALID, "current must be the version the page showed")
	}
	return &v, nil
}

// editDone sends the browser back to the memory page with a notice
// (edited, revised, tombstoned), or draws the page again with the API's
// refusal and its status.
func (c *Console) editDone(w http.ResponseWriter, r *http.Request, id, key string, err error) {
	if err != nil {
		c.showMemory(w, r, id, statusOf(err), c.errorMessage(r, err))
		return
	}
	http.Redirect(w, r, "/console/memories/"+url.PathEscape(id)+"?done="+key, http.StatusSeeOther)
}

// handleEdit changes a memory's content, summary, tags and priority.
func (c *Console) handleEdit(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	id := r.PathValue("id")
	expect, err := expected(r)
	if err != nil {
		c.editDone(w, r, id, "", err)
		return
	}
	content := strings.TrimSpace(r.PostFormValue("content"))
	if content == "" {
		c.editDone(w, r, id, "", engram.Errorf(engram.EINVALID, "content must not be empty"))
		return
	}
	summary := strings.TrimSpace(r.PostFormValue("summary"))
	tags := []string{}
	for _, t := range strings.FieldsFunc(r.PostFormValue("tags"), func(r rune) bool { return r == ',' || r == '，' }) {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	prio := engram.Priority(r.PostFormValue("priority"))
	if !prio.Valid() {
		c.editDone(w, r, id, "", engram.Errorf(engram.EINVALID, "priority must be one of P0, P1, P2, P3"))
		return
	}
	_, err = c.cfg.Memories.UpdateMemory(r.Context(), id, engram.MemoryUpdate{Content: &content, Summary: &summary, Tags: &tags,
		Priority: &prio, Source: consoleSource(s), ExpectVersion: expect})
	c.editDone(w, r, id, "edited", err)
}

// handleRevised clears needs_revision: an analyst checked the memory.
func (c *Console) handleRevised(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	id := r.PathValue("id")
	expect, err := expected(r)
	if err == nil {
		no := false
		_, err = c.cfg.Memories.UpdateMemory(r.Context(), id, engram.MemoryUpdate{NeedsRevision: &no, Source: consoleSource(s), ExpectVersion: expect})
	}
	c.editDone(w, r, id, "revised", err)
}

// handleTombstone deletes a memory (a tombstone version; rollback brings
// it back).
func (c *Console) handleTombstone(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	expect, err := expected(r)
	if err == nil {
		_, err = c.cfg.Memories.DeleteMemory(r.Context(), id, expect)
	}
	c.editDone(w, r, id, "tombstoned", err)
}
