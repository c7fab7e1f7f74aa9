//go:build unix

package storagetest

import (
	"os"
	"syscall"
)

// signalFreeze suspends (SIGSTOP) or resumes (SIGCONT) p.
func signalFreeze(p *os.Process, frozen bool) error {
	if frozen {
		return p.Signal(syscall.SIGSTOP)
	}
	return p.Signal(syscall.SIGCONT)
}
