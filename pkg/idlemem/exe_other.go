//go:build !linux

package idlemem

// releaseExecutable does nothing where the kernel's advice is not known.
func releaseExecutable() {}

// unmapExecutable does nothing where the kernel's advice is not known.
func unmapExecutable() {}
