package storagetest

import "syscall"

// minioSysProcAttr makes the kernel SIGKILL MinIO when the test process
// (precisely: the OS thread that started it) dies.
func minioSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
