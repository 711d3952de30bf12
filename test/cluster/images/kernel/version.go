package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// defaultVersion is what the stand-in reports when its image names no version: one binary runs
// under every tag, so a version image says its version in its own env (test/cluster/images/mkimage).
const defaultVersion = "0.97.0"

// firstCommentMarker is the first kernel that accepts a workspace marker without blocks.
var firstCommentMarker = [3]int{0, 96, 0}

// kernelVersion is the version Kernel.Starting reports.
func kernelVersion() string {
	if version := os.Getenv("TELO_STANDIN_VERSION"); version != "" {
		return version
	}
	return defaultVersion
}

// acceptsCommentMarker: 0.96.0 and later releases do; their prereleases and older kernels do not.
func acceptsCommentMarker(version string) bool {
	core, rest, _ := strings.Cut(strings.SplitN(version, "+", 2)[0], "-")
	parts := strings.Split(core, ".")
	for i := 0; i < 3 && i < len(parts); i++ {
		n, _ := strconv.Atoi(parts[i])
		if n != firstCommentMarker[i] {
			return n > firstCommentMarker[i]
		}
	}
	return rest == ""
}

// markerRefusal is why this kernel cannot load the workspace whose root is root: an old kernel
// fails on a marker that declares no blocks. Empty when it can.
func markerRefusal(root string) string {
	content, err := os.ReadFile(filepath.Join(root, workspaceMarker))
	if err != nil || acceptsCommentMarker(kernelVersion()) {
		return ""
	}
	for _, line := range strings.Split(string(content), "\n") {
		if trimmed := strings.TrimSpace(line); trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			return ""
		}
	}
	return `telo-workspace.yaml declares no modules: list the modules this workspace shares (modules: ["*"])`
}
