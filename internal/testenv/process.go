package testenv

import (
	"os"
	"syscall"
	"time"
)

// StopProcess asks a child process to stop (SIGTERM) and kills it if it has
// not exited after grace; exited is closed when its Wait returns. It
// returns once the process has exited.
func StopProcess(p *os.Process, exited <-chan struct{}, grace time.Duration) {
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		_ = p.Kill()
		<-exited
	}
}
