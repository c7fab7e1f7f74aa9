//go:build !linux

package storagetest

import "syscall"

// minioSysProcAttr has no parent-death signal outside Linux; StopMinIO must
// be called from TestMain there.
func minioSysProcAttr() *syscall.SysProcAttr { return nil }
