package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/engram-memory/engram"
)

// The files of a tenant's mirror.
const (
	logFile      = "log.jsonl"
	stateFile    = "state.jsonl"
	positionFile = ".position"
	archiveDir   = "archive"
	noticeFile   = "NOTICE.txt"
)

// tree is one tenant's mirror directory, opened for applying changes. All
// file access goes through an os.Root, so no name, link or race can reach
// outside it.
type tree struct {
	root     *os.Root
	maxBytes int64 // log.jsonl is archived before it would grow past this
	// maxFiles, when positive, is the tenant's budget of files in index/
	// and memories/: past it the tree turns log-only (overBudget).
	maxFiles int64
	// notice is what noticeFile says when the tree turns log-only.
	notice string
	// guard, when set, is asked before n bytes are written to name; its
	// error stops the write (the disk's free-space margin).
	guard func(name string, n int) error

	log      *os.File // log.jsonl, opened for appending
	size     int64    // its size
	first    int64    // seq of its first line, 0 when empty
	logged   int64    // seq of the last envelope written, here or archived
	position int64    // the last change applied
	// live counts the live memories the tree mirrors (as of position):
	// the files of index/ and memories/, or those it would hold when
	// log-only. It is a function of the changes alone, so a replay from
	// position counts exactly, and is recorded with position.
	live int64
	// logOnly: the tenant went past maxFiles, index/, memories/ and
	// state.jsonl are gone and only log.jsonl and archive/ are written.
	logOnly bool
}

// openTree opens (creating) the mirror at dir of root. A line cut short by
// a crash at the end of log.jsonl is dropped, so appending never continues
// half a line.
func openTree(root *os.Root, dir string, maxBytes int64) (*tree, error) {
	if err := root.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal: create %s: %w", dir, err)
	}
	r, err := root.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("journal: open %s: %w", dir, err)
	}
	t := &tree{root: r, maxBytes: maxBytes}
	if err := t.load(); err != nil {
		_ = r.Close()
		return nil, err
	}
	return t, nil
}

func (t *tree) load() error {
	if b, err := t.root.ReadFile(positionFile); err == nil {
		if err := t.parsePosition(string(b)); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("journal: %w", err)
	}
	f, err := t.root.OpenFile(logFile, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("journal: open log: %w", err)
	}
	t.log = f
	if t.size, err = repairTail(f); err != nil {
		return err
	}
	if t.size > 0 {
		if t.first, err = lineSeq(firstLine(f)); err != nil {
			return err
		}
		last, err := lastLine(f, t.size)
		if err != nil {
			return err
		}
		if t.logged, err = lineSeq(last, nil); err != nil {
			return err
		}
		return nil
	}
	// An empty log: the last envelope, if any, is in the newest archive.
	names, err := fs.Glob(t.root.FS(), archiveDir+"/log-*.jsonl")
	if err != nil {
		return fmt.Errorf("journal: list archive: %w", err)
	}
	for _, n := range names {
		if _, last, ok := archiveSeqs(path.Base(n)); ok && last > t.logged {
			t.logged = last
		}
	}
	return nil
}

func (t *tree) close() error {
	err := t.log.Close()
	return errors.Join(err, t.root.Close())
}

// apply mirrors one change: an envelope appended to log.jsonl (unless a
// run cut short by a crash already wrote it) and the index or memories
// file of the memory replaced or removed, unless the tree is log-only.
func (t *tree) apply(c *engram.Change) error {
	e, err := envelopeOf(c)
	if err != nil || e == nil {
		return err
	}
	line, err := e.line()
	if err != nil {
		return err
	}
	if c.Seq > t.logged {
		if err := t.append(line, c.Seq); err != nil {
			return err
		}
	}
	if len(e.Links) > 0 || len(e.Aliases) > 0 {
		return nil
	}
	before, after := filePath(c.Before), ""
	if e.Valid {
		after = filePath(c.After)
	}
	// The count moves only once the change is applied: a failed change
	// is applied again from the recorded position, counted once.
	live := t.live
	if before != "" {
		live--
	}
	if after != "" {
		live++
	}
	if !t.logOnly && t.maxFiles > 0 && live > t.maxFiles {
		if err := t.overBudget(); err != nil {
			return err
		}
	}
	if t.logOnly {
		t.live = live
		return nil
	}
	if before != "" && before != after {
		if err := t.remove(before); err != nil {
			return err
		}
	}
	if after != "" {
		if err := t.writeFile(after, line); err != nil {
			return err
		}
	}
	t.live = live
	return nil
}

// filePath is where m is mirrored while live: its key's index file, or
// memories/<category>/<id>.json; "" for a key the mirror cannot place.
func filePath(m *engram.Memory) string {
	if !live(m) {
		return ""
	}
	if m.Key == "" {
		return memoryPath(m.Category, m.ID)
	}
	p, err := KeyPath(m.Key)
	if err != nil {
		return ""
	}
	return p
}

// append writes line to log.jsonl in one write on a file opened with
// O_APPEND, so lines of concurrent writers never interleave, archiving
// the log first when line would take it past maxBytes.
func (t *tree) append(line []byte, seq int64) error {
	if t.size > 0 && t.size+int64(len(line)) > t.maxBytes {
		if err := t.rotate(); err != nil {
			return err
		}
	}
	if t.guard != nil {
		if err := t.guard(logFile, len(line)); err != nil {
			return err
		}
	}
	if _, err := t.log.Write(line); err != nil {
		return fmt.Errorf("journal: append to log: %w", err)
	}
	if t.size == 0 {
		t.first = seq
	}
	t.size += int64(len(line))
	t.logged = seq
	return nil
}

// rotate moves log.jsonl to archive/log-<first seq>-<last seq>.jsonl and
// writes state.jsonl: every live memory's envelope as of the last archived
// line, so state.jsonl followed by log.jsonl replays to the present.
func (t *tree) rotate() error {
	if err := t.log.Close(); err != nil {
		return fmt.Errorf("journal: close log: %w", err)
	}
	if err := t.root.MkdirAll(archiveDir, 0o700); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	name := fmt.Sprintf("%s/log-%012d-%012d.jsonl", archiveDir, t.first, t.logged)
	if err := t.root.Rename(logFile, name); err != nil {
		return fmt.Errorf("journal: archive log: %w", err)
	}
	if !t.logOnly {
		if err := t.writeState(); err != nil {
			return err
		}
	}
	f, err := t.root.OpenFile(logFile, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("journal: open log: %w", err)
	}
	t.log, t.size, t.first = f, 0, 0
	return nil
}

// writeState writes state.jsonl from the index and memories files, in
// path order.
func (t *tree) writeState() error {
	var b bytes.Buffer
	err := t.eachFile(func(p string) error {
		data, err := t.root.ReadFile(p)
		if err != nil {
			return err
		}
		b.Write(data)
		return nil
	})
	if err != nil {
		return fmt.Errorf("journal: snapshot %w", err)
	}
	return t.writeFile(stateFile, b.Bytes())
}

// writeFile replaces name with data through a temporary file and a
// rename, so a reader sees the old file or the new one, never a part.
func (t *tree) writeFile(name string, data []byte) error {
	dir, base := path.Split(name)
	if dir != "" {
		if err := t.root.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	tmp := dir + "." + base + ".tmp"
	if t.guard != nil {
		if err := t.guard(name, len(data)); err != nil {
			return err
		}
	}
	if err := t.root.WriteFile(tmp, data, 0o600); err != nil {
		// A part written before the disk filled is freed at once.
		_ = t.root.Remove(tmp)
		return fmt.Errorf("journal: %w", err)
	}
	if err := t.root.Rename(tmp, name); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

// remove deletes name and then each parent directory left empty, up to
// index/ or memories/, so ls never lists a key that is gone.
func (t *tree) remove(name string) error {
	if err := t.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("journal: %w", err)
	}
	for dir := path.Dir(name); strings.Contains(dir, "/"); dir = path.Dir(dir) {
		if t.root.Remove(dir) != nil {
			break
		}
	}
	return nil
}

// setPosition records that every change up to seq is applied, with the
// live count and whether the tree is log-only, in one file:
// "<seq> <live>[ log-only]".
func (t *tree) setPosition(seq int64) error {
	t.position = seq
	line := strconv.FormatInt(seq, 10) + " " + strconv.FormatInt(t.live, 10)
	if t.logOnly {
		line += " " + logOnlyMark
	}
	return t.writeFile(positionFile, []byte(line+"\n"))
}

// repairTail cuts f after its last newline when a crash left half a line,
// and returns its size.
func repairTail(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	size := st.Size()
	if size == 0 {
		return 0, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, fmt.Errorf("journal: read log: %w", err)
	}
	if last[0] == '\n' {
		return size, nil
	}
	keep := int64(0)
	if line, err := lastLine(f, size); err != nil {
		return 0, err
	} else if len(line) < int(size) {
		keep = size - int64(len(line))
	}
	if err := f.Truncate(keep); err != nil {
		return 0, fmt.Errorf("journal: drop half a line: %w", err)
	}
	return keep, nil
}

// lastLine returns the last line of the first size bytes of f, without
// its newline; read backwards a block at a time.
func lastLine(f *os.File, size int64) ([]byte, error) {
	end := size
	if end > 0 {
		var b [1]byte
		if _, err := f.ReadAt(b[:], end-1); err != nil {
			return nil, fmt.Errorf("journal: read log: %w", err)
		}
		if b[0] == '\n' {
			end--
		}
	}
	var tail []byte
	for pos := end; pos > 0; {
		n := min(int64(64<<10), pos)
		pos -= n
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, pos); err != nil {
			return nil, fmt.Errorf("journal: read log: %w", err)
		}
		tail = append(buf, tail...)
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return tail[i+1:], nil
		}
	}
	return tail, nil
}

// firstLine returns the first line of f.
func firstLine(f *os.File) ([]byte, error) {
	var line []byte
	buf := make([]byte, 64<<10)
	for off := int64(0); ; {
		n, err := f.ReadAt(buf, off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return append(line, buf[:i]...), nil
		}
		line = append(line, buf[:n]...)
		off += int64(n)
		if err == io.EOF {
			return line, nil
		}
		if err != nil {
			return nil, fmt.Errorf("journal: read log: %w", err)
		}
	}
}

// lineSeq reads the seq of an envelope line.
func lineSeq(line []byte, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	var e struct {
		Seq int64 `json:"seq"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return 0, fmt.Errorf("journal: a log line is not an envelope: %w", err)
	}
	return e.Seq, nil
}

// archiveSeqs parses the sequence range from an archive file's name.
func archiveSeqs(name string) (first, last int64, ok bool) {
	var a, b int64
	if n, err := fmt.Sscanf(name, "log-%d-%d.jsonl", &a, &b); err != nil || n != 2 {
		return 0, 0, false
	}
	return a, b, true
}
