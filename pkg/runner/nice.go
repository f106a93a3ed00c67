package runner

import (
	"fmt"
	"strconv"
)

// EnvNice sets the CPU priority of a service's process: a nice value from 0 (leave it as it was
// started) to 19 (the lowest). It wins over the service's default (see Behind).
const EnvNice = "PICOCLAW_NICE"

// BehindNice is the nice value of a service whose work waits behind an answer the channel has
// already been given (chat-mio, router-shiro, coder-order, executor). A gateway's webhook answer
// and approval's REST API stay at the priority they were started with: when the machine is
// busy with the pipeline, the kernel runs them first, and the webhook is answered at once rather
// than after the work of the messages before it (bench/REPORT.md, docs/performance.md).
const BehindNice = 10

// Option adjusts how Main runs a service.
type Option func(*options)

type options struct {
	nice int
}

// Behind marks a service whose work waits behind an answer already given: it runs at nice
// BehindNice unless PICOCLAW_NICE says otherwise.
func Behind(o *options) { o.nice = BehindNice }

// niceFor is the nice value the process should run at: PICOCLAW_NICE when set, otherwise the
// service's default.
func niceFor(def int, lookup func(string) (string, bool)) (int, error) {
	v, set := lookup(EnvNice)
	if !set || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 19 {
		return 0, fmt.Errorf("%s: want a nice value from 0 to 19, got %q", EnvNice, v)
	}
	return n, nil
}
