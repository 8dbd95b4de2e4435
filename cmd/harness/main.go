// Command harness runs coding-agent CLIs headless under supervision and
// turns their native output into one unified NDJSON event stream.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
