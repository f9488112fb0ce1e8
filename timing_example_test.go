package zklock_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklock/zklock"
)

// Session.Timing says what the ownership deadline rests on, and where
// zklock has it from: here a standalone server, which needs no ensemble
// timing. On an ensemble it is "conf" (learned from the servers, again at
// every connect) or "stated" (WithEnsembleTiming, for servers that refuse
// 'conf').
func ExampleTiming() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println(s.Timing().Source)
	// Output: standalone
}
