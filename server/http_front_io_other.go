//go:build !linux

package server

import "net"

// frontIO is a connection's reads and writes at the front: on systems
// other than Linux, those of the net.Conn (http_front_io_linux.go).
type frontIO struct{ c net.Conn }

func newFrontIO(c net.Conn) *frontIO { return &frontIO{c: c} }

func (fio *frontIO) Read(p []byte) (int, error) { return fio.c.Read(p) }

func (fio *frontIO) writeAll(bufs [][]byte) error {
	nb := net.Buffers(bufs)
	_, err := nb.WriteTo(fio.c)
	return err
}
