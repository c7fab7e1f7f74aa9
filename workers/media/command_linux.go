package media

import (
	"os/exec"
	"syscall"
)

// dieWithParent asks the kernel to SIGKILL cmd when the thread that started
// it exits, which for Go's long-lived runtime threads is when the worker
// process dies.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
