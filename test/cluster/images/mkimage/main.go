// Command mkimage writes the real-cluster tier's images as docker-save tarballs, so that
// `ctr images import` can load them on a node without any registry: each is an empty base,
// one layer of files, and a config naming the entrypoint.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The references the fixture points the runner and the kubelet at (test/cluster/images.ts).
const (
	busyboxRef = "k8s-runner.local/busybox:1"
	pauseRef   = "k8s-runner.local/pause:1"
	kernelRef  = "k8s-runner.local/telo-kernel:standin"
	corednsRef = "k8s-runner.local/coredns:1"
)

// The stand-in again as the Telo-version images the runner names (`<repository>:<V>-<variant>`,
// docs/telo-versions.md): the same program, told its version by its image's env.
var kernelVersions = []string{"0.95.2", "0.96.0", "0.97.0"}

func kernelVersionRef(version string) string {
	return "k8s-runner.local/telo-kernel:" + version + "-standin"
}

// entry is one file of a layer: a regular file copied from the host, or a symlink.
type entry struct {
	path   string
	source string
	link   string
}

func layerOf(entries []entry) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, e := range entries {
		// Parent directories first, each once, so the runtime never invents their modes.
		for dir := filepath.Dir(e.path); dir != "." && dir != "/" && !dirs[dir]; dir = filepath.Dir(dir) {
			dirs[dir] = true
		}
	}
	for _, dir := range sortedDirs(dirs) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(dir, "/") + "/", Mode: 0o755}); err != nil {
			return nil, err
		}
	}
	for _, e := range entries {
		name := strings.TrimPrefix(e.path, "/")
		if e.link != "" {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: e.link, Mode: 0o777}); err != nil {
				return nil, err
			}
			continue
		}
		content, err := os.ReadFile(e.source)
		if err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(content))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

// sortedDirs orders directories so that every parent precedes its children.
func sortedDirs(dirs map[string]bool) []string {
	list := make([]string, 0, len(dirs))
	for dir := range dirs {
		list = append(list, dir)
	}
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && list[j] < list[j-1]; j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
	return list
}

func writeImage(out, ref string, entries []entry, entrypoint []string, user string, env []string) error {
	layer, err := layerOf(entries)
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Config.Entrypoint = entrypoint
	cfg.Config.Env = append([]string{"PATH=/usr/local/bin:/bin"}, env...)
	cfg.Config.User = user
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	file := filepath.Join(out, strings.NewReplacer("/", "_", ":", "_").Replace(ref)+".tar")
	if err := tarball.WriteToFile(file+".tmp", tag, img); err != nil {
		return err
	}
	return os.Rename(file+".tmp", file)
}

// busyboxEntries is busybox with a link per applet, as the Debian busybox image lays it out.
func busyboxEntries(busybox string) ([]entry, error) {
	list, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %w", busybox, err)
	}
	entries := []entry{{path: "/bin/busybox", source: busybox}}
	for _, applet := range strings.Fields(string(list)) {
		if applet != "busybox" {
			entries = append(entries, entry{path: "/bin/" + applet, link: "busybox"})
		}
	}
	return entries, nil
}

// imageSpec is one image the tool writes: its reference, files, entrypoint, user and environment.
type imageSpec struct {
	ref        string
	entries    []entry
	entrypoint []string
	user       string
	env        []string
}

func main() {
	out := flag.String("out", "", "directory the tarballs are written to")
	busybox := flag.String("busybox", "/bin/busybox", "a static busybox")
	pause := flag.String("pause", "", "the pause program")
	kernel := flag.String("kernel", "", "the kernel stand-in program")
	coredns := flag.String("coredns", "", "the cluster DNS server (test/cluster/dns)")
	flag.Parse()
	if *out == "" || *pause == "" || *kernel == "" || *coredns == "" {
		log.Fatal("usage: mkimage -out DIR -pause FILE -kernel FILE -coredns FILE [-busybox FILE]")
	}
	shell, err := busyboxEntries(*busybox)
	if err != nil {
		log.Fatal(err)
	}
	images := []imageSpec{
		{busyboxRef, shell, []string{"/bin/sh"}, "", nil},
		{pauseRef, []entry{{path: "/pause", source: *pause}}, []string{"/pause"}, "", nil},
		// The kernel's pods run `sh -c '… exec telo run …'`, so the stand-in ships a shell too. Its
		// user is the kernel image's numeric non-root one: catalog app pods set no uid of their own.
		{kernelRef, append(shell, entry{path: "/usr/local/bin/telo", source: *kernel}), []string{"/usr/local/bin/telo"}, "1000:1000", nil},
	}
	for _, version := range kernelVersions {
		images = append(images, images[2])
		last := &images[len(images)-1]
		last.ref, last.env = kernelVersionRef(version), []string{"TELO_STANDIN_VERSION=" + version}
	}
	// A static binary; the Corefile comes from a ConfigMap (test/cluster/fixture/addons.ts).
	images = append(images, imageSpec{corednsRef, []entry{{path: "/coredns", source: *coredns}}, []string{"/coredns"}, "65534:65534", nil})
	for _, image := range images {
		if err := writeImage(*out, image.ref, image.entries, image.entrypoint, image.user, image.env); err != nil {
			log.Fatalf("%s: %v", image.ref, err)
		}
	}
}
