package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

type port struct {
	number   int
	protocol string
}

// script is what the entry file asks of the stand-in.
type script struct {
	source       string
	output       string
	exitCode     *int
	runFor       time.Duration
	oom          bool
	ports        []port
	reportResize bool
	tick         time.Duration
}

func (s script) portList() []map[string]any {
	list := []map[string]any{}
	for _, p := range s.ports {
		list = append(list, map[string]any{"port": p.number, "protocol": p.protocol})
	}
	return list
}

func readScript(path string) (script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return script{}, fmt.Errorf("cannot read the manifest: %w", err)
	}
	s := script{source: string(data)}
	for _, line := range strings.Split(s.source, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "# standin ")
		if !ok {
			continue
		}
		key, value, _ := strings.Cut(rest, "=")
		if err := s.set(strings.TrimSpace(key), value); err != nil {
			return script{}, fmt.Errorf("%s: %q: %w", path, line, err)
		}
	}
	return s, nil
}

func (s *script) set(key, value string) error {
	switch key {
	case "output":
		s.output = strings.ReplaceAll(value, `\n`, "\n")
	case "exit-code":
		code, err := strconv.Atoi(value)
		if err != nil || code < 0 || code > 255 {
			return fmt.Errorf("exit-code must be 0-255")
		}
		s.exitCode = &code
	case "run-ms":
		ms, err := strconv.Atoi(value)
		if err != nil || ms < 0 {
			return fmt.Errorf("run-ms must be a number of milliseconds")
		}
		s.runFor = time.Duration(ms) * time.Millisecond
	case "oom":
		s.oom = value == "true"
	case "report-resize":
		s.reportResize = value == "true"
	case "tick-ms":
		ms, err := strconv.Atoi(value)
		if err != nil || ms < 1 {
			return fmt.Errorf("tick-ms must be a positive number of milliseconds")
		}
		s.tick = time.Duration(ms) * time.Millisecond
	case "ports":
		for _, item := range strings.Split(value, ",") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			number, protocol, _ := strings.Cut(item, "/")
			n, err := strconv.Atoi(number)
			if err != nil || n < 1 || n > 65535 || (protocol != "tcp" && protocol != "udp") {
				return fmt.Errorf("ports are <port>/tcp or <port>/udp")
			}
			s.ports = append(s.ports, port{n, protocol})
		}
	default:
		return fmt.Errorf("unknown key %s", key)
	}
	return nil
}
