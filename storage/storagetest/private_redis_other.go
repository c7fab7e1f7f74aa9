//go:build !unix

package storagetest

import (
	"errors"
	"os"
)

// signalFreeze cannot suspend a process without Unix job-control signals.
func signalFreeze(*os.Process, bool) error {
	return errors.New("freezing a process needs SIGSTOP (Unix only)")
}
