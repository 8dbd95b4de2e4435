package main

import "fmt"

type versionCmd struct{}

func (versionCmd) Run(e *env) error {
	_, err := fmt.Fprintf(e.Stdout, "harness %s\n", version)
	return err
}
