package rookery

import (
	"os"
	"os/signal"
	"syscall"
)

// waitForInterrupt blocks until SIGINT or SIGTERM, or until done closes
// (the kept server was stopped some other way).
func waitForInterrupt(done <-chan struct{}) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	select {
	case <-signals:
	case <-done:
	}
}
