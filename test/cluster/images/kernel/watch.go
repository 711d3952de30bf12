package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// workspaceMarker is the file the runner seeds at the workspace's root.
const workspaceMarker = "telo-workspace.yaml"

// workspaceRoot is the nearest directory above the entry holding the workspace marker, else
// the entry's top directory (/workspace in a watch pod): the runner seeds the marker after the
// bundle, so the kernel may boot before it is there.
func workspaceRoot(entry string) string {
	for dir := filepath.Dir(entry); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, workspaceMarker)); err == nil {
			return dir
		}
	}
	top, _, _ := strings.Cut(strings.TrimPrefix(filepath.Clean(entry), "/"), "/")
	return "/" + top
}

// fingerprint names every file under root with its size and modification time, so any write
// (even of the same bytes), creation or removal changes it. The directories the kernel skips
// (skipped, workspace.go) are left out.
func fingerprint(root string) string {
	var b strings.Builder
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != root && skipped[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if info, err := d.Info(); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", path, info.Size(), info.ModTime().UnixNano())
		}
		return nil
	})
	return b.String()
}
