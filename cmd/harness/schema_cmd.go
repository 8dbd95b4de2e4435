package main

import "github.com/agentharness/harness/event"

// schemaCmd prints the JSON Schema of one event line. The schema says what
// a line may hold; the contract in words (meanings, invariants, diffs,
// usage) is docs/events.md, and how a run is supervised docs/supervision.md.
type schemaCmd struct{}

// Help is the command's detailed help.
func (schemaCmd) Help() string {
	return "The schema describes one line of the stream. The stream's contract — what every field means, " +
		"the invariants every run keeps, diffs, usage — is docs/events.md in the harness repository; " +
		"supervision (budgets, kills, exit statuses) is docs/supervision.md."
}

func (schemaCmd) Run(e *env) error {
	_, err := e.Stdout.Write(event.Schema)
	return err
}
