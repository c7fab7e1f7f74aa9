//go:build !linux

package media

import "os/exec"

// dieWithParent is Linux-only (Pdeathsig); elsewhere an orphaned ffmpeg
// runs until it finishes.
func dieWithParent(*exec.Cmd) {}
