package server

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// The front reads request heads and writes cached answers with the system
// calls made directly on the connection's descriptor, through its
// syscall.RawConn: the runtime still waits for the descriptor to be ready
// (and keeps the deadlines) as for any read or write, but a read or writev
// on a non-blocking socket never blocks, so it is made without the
// runtime's bookkeeping for a call that might (entersyscall and
// exitsyscall). That bookkeeping was more than the calls themselves here:
// a writev on loopback delivers the answer to the client inside the call,
// long enough that the runtime's monitor took the processor from the
// goroutine (sysmon's retake, waking another thread to run the others,
// which then slept again when the call returned): 10% of a cached page's
// CPU in `perf` on two cores, with sysmon never sleeping longer than 20 us.

// frontIO is a connection's reads and writes at the front.
type frontIO struct {
	c  net.Conn
	rc syscall.RawConn // nil: through c (not a socket of this system)

	// The current call's arguments and result, for the functions below
	// (made once, so that a call allocates nothing).
	p       []byte
	bufs    [][]byte
	iov     [4]syscall.Iovec
	n       int
	errno   syscall.Errno
	readFn  func(fd uintptr) bool
	writeFn func(fd uintptr) bool
}

func newFrontIO(c net.Conn) *frontIO {
	fio := &frontIO{c: c}
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			fio.rc = rc
			fio.readFn, fio.writeFn = fio.readOnce, fio.writeSome
		}
	}
	return fio
}

func (fio *frontIO) Read(p []byte) (int, error) {
	if fio.rc == nil {
		return fio.c.Read(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	fio.p, fio.n, fio.errno = p, 0, 0
	err := fio.rc.Read(fio.readFn)
	fio.p = nil
	switch {
	case err != nil: // closed, or past the read deadline
		return 0, err
	case fio.errno != 0:
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: fio.errno}
	case fio.n == 0:
		return 0, io.EOF
	}
	return fio.n, nil
}

// readOnce reads once into fio.p; false: nothing to read yet (the runtime
// waits for the descriptor).
func (fio *frontIO) readOnce(fd uintptr) bool {
	n, errno, ready := nonBlocking(syscall.SYS_READ, fd, unsafe.Pointer(&fio.p[0]), len(fio.p))
	fio.n, fio.errno = n, errno
	return ready
}

// nonBlocking makes a read or writev on a non-blocking socket, again when
// a signal interrupted it. ready is false when the socket had nothing to
// read or no room to write (EAGAIN); errno is any other failure.
func nonBlocking(trap, fd uintptr, p unsafe.Pointer, n int) (done int, errno syscall.Errno, ready bool) {
	for {
		r, _, e := syscall.RawSyscall(trap, fd, uintptr(p), uintptr(n))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return 0, 0, false
		}
		return int(r), e, true
	}
}

// writeAll writes bufs whole, in one writev when the socket takes it.
func (fio *frontIO) writeAll(bufs [][]byte) error {
	if fio.rc == nil {
		nb := net.Buffers(bufs)
		_, err := nb.WriteTo(fio.c)
		return err
	}
	fio.bufs, fio.errno = bufs, 0
	err := fio.rc.Write(fio.writeFn)
	fio.bufs = nil
	if err == nil && fio.errno != 0 {
		err = &net.OpError{Op: "write", Net: "tcp", Err: fio.errno}
	}
	return err
}

// writeSome writes what is left of fio.bufs until the socket takes no
// more (false: the runtime waits until it can) or all is written.
func (fio *frontIO) writeSome(fd uintptr) bool {
	for {
		iov := fio.iov[:0]
		for _, b := range fio.bufs {
			if len(b) > 0 && len(iov) < len(fio.iov) {
				iov = append(iov, syscall.Iovec{Base: &b[0]})
				iov[len(iov)-1].SetLen(len(b))
			}
		}
		if len(iov) == 0 {
			return true
		}
		n, errno, ready := nonBlocking(syscall.SYS_WRITEV, fd, unsafe.Pointer(&iov[0]), len(iov))
		if !ready {
			return false
		}
		if errno != 0 {
			fio.errno = errno
			return true
		}
		// Drop what was written.
		left := n
		for len(fio.bufs) > 0 && left >= len(fio.bufs[0]) {
			left -= len(fio.bufs[0])
			fio.bufs = fio.bufs[1:]
		}
		if len(fio.bufs) > 0 {
			fio.bufs[0] = fio.bufs[0][left:]
		}
	}
}
