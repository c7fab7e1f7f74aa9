package media

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// workDirPattern matches the working directories run makes.
const workDirPattern = "media-*-*"

// RemoveStale deletes working directories that a worker killed mid-task
// left in TempDir (nothing ran their deferred removal): those in which
// nothing was written for olderThan. Pick olderThan above the task
// timeout, so a directory another live worker on this machine still uses
// is never taken. It returns how many it removed.
func (p *Processor) RemoveStale(olderThan time.Duration) (int, error) {
	dir := p.TempDir
	if dir == "" {
		dir = os.TempDir()
	}
	matches, err := filepath.Glob(filepath.Join(dir, workDirPattern))
	if err != nil {
		return 0, fmt.Errorf("list media working directories: %w", err)
	}
	cutoff := p.now().Add(-olderThan)
	removed := 0
	for _, path := range matches {
		if lastWrite(path).After(cutoff) {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			return removed, fmt.Errorf("remove stale working directory %s: %w", path, err)
		}
		removed++
	}
	return removed, nil
}

// lastWrite is the newest modification time of dir and the files in it.
func lastWrite(dir string) time.Time {
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() {
		return time.Now() // not ours to judge: keep it
	}
	newest := info.ModTime()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
	}
	return newest
}
