package event

import _ "embed"

// Schema is the JSON Schema (draft 2020-12) of one event line.
//
//go:embed schema.json
var Schema []byte
