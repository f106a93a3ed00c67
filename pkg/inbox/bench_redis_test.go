//go:build !serveronly && !sqliteonly

package inbox_test

import (
	"context"
	"crypto/sha1"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// The benchmarks on Redis: the consumer has a client of its own that counts its commands.
func init() {
	redisBench := benchEngine{"redis", func(b *testing.B) (inbox.Engine, inbox.Engine, string, func(b *testing.B)) {
		r := testinfra.Redis(b)
		c := redis.NewClient(&redis.Options{Addr: r.Addr})
		b.Cleanup(func() { _ = c.Close() })
		count := newCallCounter()
		c.AddHook(count)
		return inbox.RedisEngine(r.Client), inbox.RedisEngine(c), r.Prefix, count.report
	}}
	benchEngines = append([]benchEngine{redisBench}, benchEngines...)
}

// callCounter is a go-redis hook that counts round trips (a command, or a pipeline with all
// its commands) and commands by name (a script by its name in the inbox).
type callCounter struct {
	mu     sync.Mutex
	trips  int64
	byName map[string]int64
}

func newCallCounter() *callCounter { return &callCounter{byName: map[string]int64{}} }

func (c *callCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *callCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.add(cmd)
		return next(ctx, cmd)
	}
}

func (c *callCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.add(cmds...)
		return next(ctx, cmds)
	}
}

func (c *callCounter) add(cmds ...redis.Cmder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips++
	for _, cmd := range cmds {
		name := cmd.Name()
		args := cmd.Args()
		switch {
		case name == "evalsha" && len(args) > 1:
			name = inbox.ScriptName(fmt.Sprint(args[1]))
		case name == "eval" && len(args) > 1:
			// Redis lost its scripts (SCRIPT FLUSH): the source is sent once.
			name = inbox.ScriptName(fmt.Sprintf("%x", sha1.Sum([]byte(fmt.Sprint(args[1]))))) + "_eval"
		}
		c.byName[name]++
	}
}

// report adds the round trips and commands per op since the last call to b's results, each
// command by name (a nil b only starts counting again).
func (c *callCounter) report(b *testing.B) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() {
		c.trips = 0
		clear(c.byName)
	}()
	if b == nil || c.trips == 0 {
		return
	}
	n := float64(b.N)
	b.ReportMetric(float64(c.trips)/n, "trips/op")
	var all int64
	names := make([]string, 0, len(c.byName))
	for name, k := range c.byName {
		all += k
		names = append(names, name)
	}
	b.ReportMetric(float64(all)/n, "cmds/op")
	slices.Sort(names)
	for _, name := range names {
		if per := float64(c.byName[name]) / n; per >= 0.01 {
			b.ReportMetric(per, strings.ReplaceAll(name, " ", "_")+"/op")
		}
	}
}
