package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// The workspace app's surface (src/kube/workspace-client.ts): the tree, a change set, one file,
// a snapshot; every failure is 500 {error}.
func serveWorkspace(dir, port string) {
	if port == "" {
		port = "8099"
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /workspace", func(w http.ResponseWriter, _ *http.Request) {
		files, err := walk(dir, false)
		reply(w, map[string]any{"files": files}, err)
	})
	mux.HandleFunc("GET /workspace/snapshot", func(w http.ResponseWriter, _ *http.Request) {
		files, err := walk(dir, true)
		reply(w, map[string]any{"files": files}, err)
	})
	mux.HandleFunc("GET /workspace/file", func(w http.ResponseWriter, r *http.Request) {
		path, err := inside(dir, r.URL.Query().Get("path"))
		if err != nil {
			reply(w, nil, err)
			return
		}
		data, err := os.ReadFile(path)
		content := string(data)
		if r.URL.Query().Get("encoding") == "base64" {
			content = base64.StdEncoding.EncodeToString(data)
		}
		reply(w, map[string]any{"content": content, "size": len(data)}, err)
	})
	mux.HandleFunc("POST /workspace", func(w http.ResponseWriter, r *http.Request) {
		var changes struct {
			Write []struct {
				Path, Content, Encoding string
			}
			Delete []string
		}
		if err := json.NewDecoder(r.Body).Decode(&changes); err != nil {
			reply(w, nil, fmt.Errorf("bad change set: %w", err))
			return
		}
		written, deleted, err := apply(dir, changes.Write, changes.Delete)
		reply(w, map[string]any{"written": written, "deleted": deleted}, err)
	})
	if err := http.ListenAndServe(":"+port, mux); err != nil {
		fmt.Fprintf(os.Stderr, "telo: workspace on %s: %v\n", port, err)
		os.Exit(1)
	}
}

func apply(dir string, writes []struct{ Path, Content, Encoding string }, deletes []string) (int, int, error) {
	written, deleted := 0, 0
	for _, file := range writes {
		path, err := inside(dir, file.Path)
		if err != nil {
			return written, deleted, err
		}
		data := []byte(file.Content)
		if file.Encoding == "base64" {
			if data, err = base64.StdEncoding.DecodeString(file.Content); err != nil {
				return written, deleted, fmt.Errorf("%s: bad base64", file.Path)
			}
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return written, deleted, err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return written, deleted, err
		}
		written++
	}
	for _, name := range deletes {
		path, err := inside(dir, name)
		if err != nil {
			return written, deleted, err
		}
		if err := os.RemoveAll(path); err != nil {
			return written, deleted, err
		}
		deleted++
	}
	return written, deleted, nil
}

// inside resolves a workspace-relative path, refusing one that leaves the workspace.
func inside(dir, rel string) (string, error) {
	clean := filepath.Clean("/" + rel)
	if rel == "" || clean == "/" {
		return "", fmt.Errorf("path %q is not a file of the workspace", rel)
	}
	return filepath.Join(dir, clean), nil
}

var skipped = map[string]bool{"node_modules": true, ".telo": true, ".git": true}

func walk(dir string, withContent bool) ([]map[string]any, error) {
	files := []map[string]any{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && skipped[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel := strings.TrimPrefix(path, dir+"/")
		file := map[string]any{"path": rel, "hash": hex.EncodeToString(sum[:])}
		if withContent {
			file["content"], file["encoding"] = base64.StdEncoding.EncodeToString(data), "base64"
		}
		files = append(files, file)
		return nil
	})
	return files, err
}

func reply(w http.ResponseWriter, body any, err error) {
	w.Header().Set("content-type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		body = map[string]any{"error": err.Error()}
	}
	json.NewEncoder(w).Encode(body)
}
