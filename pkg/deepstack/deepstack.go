// Package deepstack grows a goroutine's stack in one step before it runs a deep call chain.
//
// A goroutine starts with a small stack that the runtime doubles, copying it each time, whenever
// a call would overflow it. A goroutine that handles a message of the embedded suite goes through
// the channel runtime, the chat service and the router in process — each behind a client and a
// server's interceptors — and grew its stack three or four times per message, each copy walking
// every frame of an already deep stack: about 6 % of the suite's CPU under load. Reserve, called
// while the stack is still shallow, makes the runtime grow it to its working size at once (one
// copy of a few frames); the runtime gives it back when the goroutine ends or, at a collection,
// shrinks it when it is mostly unused.
package deepstack

// Size is how much stack Reserve makes room for: a message's chain through the embedded suite
// uses a little under 64 KiB.
const Size = 56 << 10

// Reserve grows the calling goroutine's stack so that Size more bytes fit below the caller's
// frame without another growth.
//
//go:noinline
func Reserve() byte {
	var frame [Size]byte
	return touch(frame[:])
}

// touch reads the frame, so the compiler keeps it on the stack at its full size.
//
//go:noinline
func touch(b []byte) byte { return b[len(b)-1] }
