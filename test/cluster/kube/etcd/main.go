// Command etcd is etcd's server built at the version Kubernetes pins. `go install` of etcd's
// own command fails on the replace directives in its go.mod, so this main calls the same entry.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
