package storagetest

import "syscall"

// minioSysProcAttr makes the kernel SIGKILL MinIO when the test process
// (precisely: the OS thread that started it) dies.
func minioSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// processAlive reports whether a process with pid exists.
func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) != syscall.ESRCH
}
