package media

import (
	"os/exec"
	"syscall"
)

// dieWithParent asks the kernel to SIGKILL cmd when the thread that started
// it exits, which for Go's long-lived runtime threads is when the worker
// process dies. cmd also gets a process group of its own, so a signal sent
// to the worker's group (Ctrl-C in a terminal, a service manager stopping
// it) does not reach ffmpeg, which would exit as if the input were bad:
// the worker stops it through the task's context instead.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
