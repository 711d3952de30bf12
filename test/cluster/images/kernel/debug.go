package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"
)

// debugStream is the inspector's event stream. The real kernel writes no `id:` lines and replays
// its whole buffer to every new connection; the stand-in does the same, so the runner's relay
// meets on the real cluster what it meets in production.
type debugStream struct {
	mu     sync.Mutex
	frames [][]byte
	notify chan struct{}
}

func newDebugStream() *debugStream {
	return &debugStream{notify: make(chan struct{})}
}

func (d *debugStream) event(name string, payload any) {
	frame, _ := json.Marshal(map[string]any{
		"kind": "event", "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "event": name, "payload": payload,
	})
	d.mu.Lock()
	d.frames = append(d.frames, frame)
	close(d.notify)
	d.notify = make(chan struct{})
	d.mu.Unlock()
}

// stopped records Kernel.Stopped, then gives connected followers a moment to read it before the
// process (and with it the stream) ends.
func (d *debugStream) stopped(code int) {
	d.event("Kernel.Stopped", map[string]any{"exitCode": code})
	time.Sleep(300 * time.Millisecond)
}

func (d *debugStream) serve(addr string) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		w.Header().Set("cache-control", "no-cache")
		flusher, _ := w.(http.Flusher)
		sent := 0
		for {
			d.mu.Lock()
			pending, wake := d.frames[sent:], d.notify
			d.mu.Unlock()
			for _, frame := range pending {
				fmt.Fprintf(w, "data: %s\n\n", frame)
			}
			sent += len(pending)
			if flusher != nil {
				flusher.Flush()
			}
			select {
			case <-wake:
			case <-r.Context().Done():
				return
			}
		}
	})
	if err := http.ListenAndServe(addr, mux); err != nil {
		fmt.Fprintf(os.Stderr, "telo: inspector on %s: %v\n", addr, err)
	}
}
