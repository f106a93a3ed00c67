package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/bench/internal/faults"
)

// faultOptions are the flags of the fault run (-faults).
type faultOptions struct {
	on                      bool
	messages, chats         int
	replicas                int
	pause, down, gap, drain time.Duration
}

func (f *faultOptions) flags() {
	flag.BoolVar(&f.on, "faults", false, "fault run: LINE traffic while every service is killed and restarted and Redis, Postgres and the LINE API are paused; writes faults.json and faults.md (faults-<N>replicas.* with -replicas N)")
	flag.IntVar(&f.messages, "faults-messages", 2000, "fault run: LINE messages sent")
	flag.IntVar(&f.chats, "faults-chats", 100, "fault run: LINE chats the messages are spread over")
	flag.IntVar(&f.replicas, "replicas", 1, "fault run: processes of every consumer (gateways, chat-mio, router-shiro, executor, approval), each behind a round-robin balancer")
	flag.DurationVar(&f.pause, "faults-pause", 60*time.Second, "fault run: how long Redis and Postgres are paused and the LINE API is down")
	flag.DurationVar(&f.down, "faults-down", 2*time.Second, "fault run: how long a killed service stays down before it is restarted")
	flag.DurationVar(&f.gap, "faults-gap", 5*time.Second, "fault run: time between two faults")
	flag.DurationVar(&f.drain, "faults-drain", 3*time.Minute, "fault run: how long to wait for the last answers after the faults")
}

// runFaults runs the fault schedule under traffic and writes the counts; it fails when a
// message was lost, repeated, reordered or answered with an error.
func runFaults(ctx context.Context, o options) error {
	root, _, err := setup(&o)
	if err != nil {
		return err
	}
	fo := o.faults
	name := "faults"
	if fo.replicas > 1 {
		name = fmt.Sprintf("faults-%dreplicas", fo.replicas)
	}
	res, err := faults.Run(ctx, faults.Options{Root: root, LogDir: filepath.Join(o.out, name+"-logs"),
		Messages: fo.messages, Chats: fo.chats, Pause: fo.pause, Down: fo.down, Gap: fo.gap, Drain: fo.drain,
		Replicas: fo.replicas, Logf: logf})
	if res != nil {
		if werr := res.Write(o.out, name); werr != nil {
			err = errors.Join(err, werr)
		}
		res.Markdown(os.Stdout)
		logf("report written to %s", filepath.Join(o.out, name+".{json,md}"))
	}
	if err != nil {
		return err
	}
	if f := res.Failures(); len(f) > 0 {
		return fmt.Errorf("fault run failed: %s", strings.Join(f, "; "))
	}
	return nil
}
