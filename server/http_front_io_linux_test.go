package server

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair is a connected pair of loopback TCP connections (server side
// first) with small socket buffers, so that a large answer takes many
// writes and waits for the reader.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	_ = server.(*net.TCPConn).SetWriteBuffer(4096)
	_ = client.(*net.TCPConn).SetReadBuffer(4096)
	return server, client
}

// The front's reads and writes on a socket go through its descriptor, and
// do what the connection's own would: an answer far larger than the
// socket takes at once arrives whole and in order (the writer waits for
// the reader rather than dropping or repeating bytes), an empty piece is
// skipped, a read gets what was sent, a read deadline ends a read, the
// peer's close is io.EOF, and a write to a peer that left fails rather
// than hangs.
func TestFrontIOOnSockets(t *testing.T) {
	t.Parallel()
	server, client := tcpPair(t)
	fio := newFrontIO(server)
	if fio.rc == nil {
		t.Fatal("a TCP connection is not read and written through its descriptor")
	}

	head := []byte("HTTP/1.1 200 OK\r\n\r\n")
	body := make([]byte, 8<<20)
	for i := range body {
		body[i] = byte(rand.Uint32())
	}
	written := make(chan error, 1)
	go func() { written <- fio.writeAll([][]byte{head, nil, body}) }()
	got, err := io.ReadAll(io.LimitReader(client, int64(len(head)+len(body))))
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	if !bytes.Equal(got, append(append([]byte{}, head...), body...)) {
		t.Fatalf("the answer arrived changed") // (the cleanup's close ends the writer)
	}
	if err := <-written; err != nil {
		t.Fatalf("writeAll: %v", err)
	}

	if _, err := client.Write([]byte("GET / HTTP/1.1\r\n")); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 64)
	n, err := fio.Read(p)
	if err != nil || string(p[:n]) != "GET / HTTP/1.1\r\n" {
		t.Fatalf("read %q, %v", p[:n], err)
	}

	_ = server.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := fio.Read(p); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read past its deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	_ = server.SetReadDeadline(time.Time{})

	client.Close()
	if _, err := fio.Read(p); err != io.EOF {
		t.Fatalf("a read after the peer closed: %v, want io.EOF", err)
	}
	if err := fio.writeAll([][]byte{body}); err == nil {
		t.Fatal("writing 8 MB to a peer that left succeeded")
	}
}

// A connection that is not a socket of this system (a TLS connection, a
// pipe) is read and written through its own methods.
func TestFrontIOOnOtherConnections(t *testing.T) {
	t.Parallel()
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	fio := newFrontIO(server)
	if fio.rc != nil {
		t.Fatal("a pipe has a descriptor")
	}
	go func() { _ = fio.writeAll([][]byte{[]byte("head "), []byte("body")}) }()
	got := make([]byte, 9)
	if _, err := io.ReadFull(client, got); err != nil || string(got) != "head body" {
		t.Fatalf("got %q, %v", got, err)
	}
	go func() { _, _ = client.Write([]byte("request")) }()
	p := make([]byte, 16)
	n, err := fio.Read(p)
	if err != nil || string(p[:n]) != "request" {
		t.Fatalf("read %q, %v", p[:n], err)
	}
}
