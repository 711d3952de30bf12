// Command coredns is the real-cluster tier's cluster DNS: CoreDNS's own server (coremain) with
// only the plugins the tier's Corefile names, so the build compiles the Kubernetes plugin and not
// the cloud providers' SDKs that CoreDNS's full plugin list pulls in.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() {
	coremain.Run()
}
