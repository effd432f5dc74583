package cli

import (
	"os"
	"os/signal"
)

// Relay turns the signals sig (e.g. SIGHUP, "reload") into sends on the
// returned channel, one at a time: a signal that arrives while the last
// one is not yet received waits for it. stop ends the relay.
func Relay(sig ...os.Signal) (events <-chan struct{}, stop func()) {
	in := make(chan os.Signal, 1)
	signal.Notify(in, sig...)
	out, done := make(chan struct{}), make(chan struct{})
	go func() {
		for {
			select {
			case <-in:
				select {
				case out <- struct{}{}:
				case <-done:
					return
				}
			case <-done:
				return
			}
		}
	}()
	return out, func() {
		signal.Stop(in)
		close(done)
	}
}
