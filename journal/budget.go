package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// logOnlyMark ends the position file of a tree that went past its budget.
const logOnlyMark = "log-only"

// parsePosition reads the position file: "<seq> <live>[ log-only]", or
// "<seq>" as mirrors before the file budget wrote it, whose live files
// are then counted once.
func (t *tree) parsePosition(s string) error {
	f := strings.Fields(s)
	bad := func(err error) error { return fmt.Errorf("journal: %s %q: %w", positionFile, s, err) }
	if len(f) == 0 || len(f) > 3 || len(f) == 3 && f[2] != logOnlyMark {
		return bad(errors.New("want <seq> <live>[ log-only]"))
	}
	var err error
	if t.position, err = strconv.ParseInt(f[0], 10, 64); err != nil {
		return bad(err)
	}
	t.logOnly = len(f) == 3
	if len(f) >= 2 {
		if t.live, err = strconv.ParseInt(f[1], 10, 64); err != nil {
			return bad(err)
		}
		return nil
	}
	t.live, err = t.countFiles()
	return err
}

// countFiles counts the files of index/ and memories/.
func (t *tree) countFiles() (int64, error) {
	var n int64
	if err := t.eachFile(func(string) error { n++; return nil }); err != nil {
		return 0, fmt.Errorf("journal: count %w", err)
	}
	return n, nil
}

// eachFile calls fn with the path of each file of index/ and memories/
// (its .json files, hidden ones left out), in path order: what the state
// snapshot holds and the live count counts. Its error names the folder.
func (t *tree) eachFile(fn func(p string) error) error {
	for _, dir := range []string{"index", "memories"} {
		err := fs.WalkDir(t.root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == dir {
					return fs.SkipDir
				}
				return err
			}
			if d.IsDir() || strings.HasPrefix(d.Name(), ".") || !strings.HasSuffix(p, ".json") {
				return nil
			}
			return fn(p)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
	}
	return nil
}

// overBudget turns the tree log-only: its index/ and memories/ files and
// state.jsonl go (a tenant this large is searched with jq over log.jsonl,
// and a file per memory costs a disk block and an inode each), and
// noticeFile says why and how to bring them back.
func (t *tree) overBudget() error {
	for _, p := range []string{"index", "memories", stateFile} {
		if err := t.root.RemoveAll(p); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	if err := t.writeNotice(); err != nil {
		return err
	}
	t.logOnly = true
	return nil
}

// writeNotice writes noticeFile; a log-only tree rebuilt from nothing
// writes it first.
func (t *tree) writeNotice() error {
	return t.writeFile(noticeFile, []byte(t.notice))
}

// budgetNotice is the text of noticeFile for tenant, past maxFiles.
func budgetNotice(tenant string, maxFiles int64) string {
	return fmt.Sprintf(`index/, memories/ and state.jsonl are not written for this tenant: it holds more than
%d live memories (mirror.max_files), and a file per memory would cost the disk more than the
database. log.jsonl and archive/ still record every write: search them with grep or jq.
To have the files again, raise mirror.max_files (or let the sleep cycle archive enough) and run
engram mirror rebuild --tenant %s
`, maxFiles, tenant)
}
