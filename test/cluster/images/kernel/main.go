// Command telo is a stand-in for the Telo kernel on the real-cluster tier, where the real kernel
// image cannot be pulled. It takes the command lines the runner's pod builders write
// (src/kube/specs): `telo run [--watch] [--no-cache-write] [--inspect ADDR] [--no-open] ENTRY`.
//
// The application it "runs" is described by lines of the entry file (test/cluster/standin.ts
// writes them), so a test scripts the stand-in through the bundle it sends, as a user would:
//
//	# standin output=<text>       printed at boot (\n escapes a newline)
//	# standin exit-code=<n>       exit with n after run-ms (otherwise run until stdin ends)
//	# standin run-ms=<n>          how long the application runs before exiting
//	# standin oom=true            allocate memory until the kernel's OOM killer ends it
//	# standin ports=3000/tcp,...  listen on these and report them in Kernel.PortsResolved
//	# standin report-resize=true  print the terminal size on every SIGWINCH
//	# standin tick-ms=<n>         print "tick <k>" (k from 1) every n ms while the application runs
//
// Like the real kernel it echoes its terminal (stdin lines back to stdout), serves the inspector
// stream on --inspect as the real kernel does (no `id:` lines, the whole buffer replayed to every
// connection), reloads on every change of its workspace with --watch, and run on the workspace app's manifest
// (WORKSPACE_DIR set) it serves the workspace container's HTTP surface. Run without arguments,
// as a catalog app's image entrypoint is (src/kube/specs/app-pod.ts), it is a predefined app that
// echoes its terminal until stdin ends.
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

type options struct {
	watch   bool
	inspect string
	entry   string
}

func parseArgs(args []string) (options, error) {
	var opts options
	if len(args) == 0 || args[0] != "run" {
		return opts, fmt.Errorf("usage: telo run [--watch] [--inspect ADDR] [--no-open] [--no-cache-write] ENTRY")
	}
	for i := 1; i < len(args); i++ {
		switch arg := args[i]; {
		case arg == "--watch":
			opts.watch = true
		case arg == "--no-open" || arg == "--no-cache-write":
		case arg == "--inspect" && i+1 < len(args):
			i++
			opts.inspect = args[i]
		case strings.HasPrefix(arg, "--inspect="):
			opts.inspect = strings.TrimPrefix(arg, "--inspect=")
		case strings.HasPrefix(arg, "-"):
			return opts, fmt.Errorf("unknown option %s", arg)
		default:
			if opts.entry == "" {
				opts.entry = arg
			}
		}
	}
	if opts.entry == "" {
		return opts, fmt.Errorf("telo run: no manifest given")
	}
	return opts, nil
}

func main() {
	if len(os.Args) == 1 {
		fmt.Print("telo stand-in app: type a line\r\n")
		go echoTerminal()
		<-stdinClosed
		return
	}
	opts, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if dir := os.Getenv("WORKSPACE_DIR"); dir != "" && strings.HasPrefix(opts.entry, "/opt/telo-workspace/") {
		serveWorkspace(dir, os.Getenv("PORT"))
		return
	}
	stream := newDebugStream()
	if opts.inspect != "" {
		go stream.serve(opts.inspect)
		// As the real kernel does, `telo run --inspect` says it holds the application open for
		// its debugger before anything has run; the line marks no run's end.
		if !opts.watch {
			fmt.Print("[inspect] holding the application open\n")
		}
	}
	go echoTerminal()
	app, err := readScript(opts.entry)
	if err != nil {
		fmt.Fprintf(os.Stderr, "telo: %v\n", err)
		os.Exit(1)
	}
	watchResize(app)
	if opts.watch {
		runWatching(opts.entry, app, stream)
		return
	}
	code := runOnce(app, stream, nil)
	stream.stopped(code)
	os.Exit(code)
}

// echoTerminal is the application's terminal: what is typed comes back, and stdin's end is the
// application's end (^D on a tty), as a shell's `cat` would behave.
func echoTerminal() {
	reader := bufio.NewReader(os.Stdin)
	for {
		line, err := reader.ReadString('\n')
		if line != "" {
			fmt.Print(line)
		}
		if err != nil {
			stdinClosed <- struct{}{}
			return
		}
	}
}

var stdinClosed = make(chan struct{}, 1)

// runOnce boots the application, and returns its exit code once it ends (or when reload fires).
func runOnce(app script, stream *debugStream, reload <-chan struct{}) int {
	stream.event("Kernel.Starting", map[string]any{"version": kernelVersion()})
	listeners := listen(app.ports)
	defer closeAll(listeners)
	stream.event("Kernel.PortsResolved", map[string]any{"ports": app.portList()})
	if app.output != "" {
		fmt.Print(app.output)
	}
	stream.event("Kernel.Started", map[string]any{})
	if app.tick > 0 {
		stopTicking := tick(app.tick)
		defer stopTicking()
	}
	if app.oom {
		time.Sleep(app.runFor)
		exhaustMemory()
	}
	// A scripted exit wins over stdin's end; otherwise stdin's end is the application's end.
	var exit <-chan time.Time
	closed := stdinClosed
	if app.exitCode != nil {
		exit, closed = time.After(app.runFor), nil
	}
	terminate := make(chan os.Signal, 1)
	signal.Notify(terminate, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(terminate)
	select {
	case <-exit:
		return *app.exitCode
	case <-closed:
		return 0
	case sig := <-terminate:
		return 128 + int(sig.(syscall.Signal))
	case <-reload:
		return 0
	}
}

// tick prints a counter until the returned stop is called: output to follow across a runner handover.
func tick(every time.Duration) func() {
	done := make(chan struct{})
	go func() {
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		for count := 1; ; count++ {
			select {
			case <-done:
				return
			case <-ticker.C:
				fmt.Printf("tick %d\n", count)
			}
		}
	}()
	return func() { close(done) }
}

// exhaustMemory touches ever more memory until the container's limit ends the process.
func exhaustMemory() {
	var hoard [][]byte
	for {
		chunk := make([]byte, 16<<20)
		for i := range chunk {
			chunk[i] = byte(i)
		}
		hoard = append(hoard, chunk)
	}
}

// runWatching reboots the application whenever a file of its workspace changes, as
// `telo run --watch` does: the real kernel watches every file of the workspace, not only the
// entry, and a rewrite of the same bytes (the runner's manual reload) is a change too.
func runWatching(entry string, app script, stream *debugStream) {
	root := workspaceRoot(entry)
	for {
		reload := make(chan struct{})
		go func(before string) {
			for {
				time.Sleep(200 * time.Millisecond)
				if fingerprint(root) != before {
					close(reload)
					return
				}
			}
		}(fingerprint(root))
		if refusal := markerRefusal(root); refusal != "" {
			// As the kernel does: the run fails, and the next change of the workspace is another try.
			stream.event("Kernel.Starting", map[string]any{"version": kernelVersion()})
			stream.event("Kernel.RunFailed", map[string]any{"code": "INVALID_WORKSPACE_MARKER", "message": refusal})
			fmt.Fprintf(os.Stderr, "telo: %s\n", refusal)
			<-reload
			if next, err := readScript(entry); err == nil {
				app = next
			}
			continue
		}
		code := runOnce(app, stream, reload)
		stream.stopped(code)
		select {
		case <-reload:
		default:
			os.Exit(code)
		}
		next, err := readScript(entry)
		if err != nil {
			fmt.Fprintf(os.Stderr, "telo: %v\n", err)
			os.Exit(1)
		}
		app = next
	}
}
