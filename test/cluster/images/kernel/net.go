package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"unsafe"
)

// listen opens every declared port: HTTP answering who it is on TCP, an echo on UDP.
func listen(ports []port) []io.Closer {
	var closers []io.Closer
	for _, p := range ports {
		addr := fmt.Sprintf(":%d", p.number)
		if p.protocol == "udp" {
			conn, err := net.ListenPacket("udp", addr)
			if err != nil {
				fmt.Fprintf(os.Stderr, "telo: listen %s/udp: %v\n", addr, err)
				continue
			}
			closers = append(closers, conn)
			go echoPackets(conn)
			continue
		}
		listener, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "telo: listen %s/tcp: %v\n", addr, err)
			continue
		}
		closers = append(closers, listener)
		number := p.number
		go http.Serve(listener, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "telo stand-in listening on %d\n", number)
		}))
	}
	return closers
}

func echoPackets(conn net.PacketConn) {
	buf := make([]byte, 64<<10)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			return
		}
		conn.WriteTo(buf[:n], from)
	}
}

func closeAll(closers []io.Closer) {
	for _, c := range closers {
		c.Close()
	}
}

// watchResize prints the terminal's size on every SIGWINCH when the script asks for it.
func watchResize(app script) {
	if !app.reportResize {
		return
	}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	go func() {
		for range winch {
			var size struct{ rows, cols, x, y uint16 }
			_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, os.Stdout.Fd(), syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&size)))
			if errno == 0 {
				fmt.Printf("[telo stand-in] terminal resized to %dx%d\r\n", size.cols, size.rows)
			}
		}
	}()
}
