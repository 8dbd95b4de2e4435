package main

import "github.com/agentharness/harness/event"

type schemaCmd struct{}

func (schemaCmd) Run(e *env) error {
	_, err := e.Stdout.Write(event.Schema)
	return err
}
