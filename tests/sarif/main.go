// Command sarif-validate checks SARIF logs against the OASIS SARIF 2.1.0 JSON schema with a
// real JSON Schema validator (santhosh-tekuri/jsonschema, draft-04 as the schema declares,
// formats asserted). The end-to-end tests run it on what `kubectl owners drift -o sarif`
// prints (tests/e2e/src/sarif_schema.rs). The schema is not in the repository:
// scripts/fetch-test-data puts it under target/test-data/sarif/.
//
// Usage: go run . SCHEMA LOG...
// Exit 0 when every log is valid; 1 when one is not (each error on stderr, with the JSON
// pointer of the offending value); 2 when a file cannot be read or the schema compiled.
package main

import (
	"fmt"
	"os"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: sarif-validate SCHEMA LOG...")
		os.Exit(2)
	}
	schema, err := compile(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "sarif-validate: %v\n", err)
		os.Exit(2)
	}
	status := 0
	for _, path := range os.Args[2:] {
		if err := validate(schema, path); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			if _, invalid := err.(*jsonschema.ValidationError); !invalid {
				os.Exit(2)
			}
			status = 1
		}
	}
	os.Exit(status)
}

// compile reads the schema at path and compiles it, formats asserted (uri, uri-reference,
// date-time: SARIF consumers reject what these refuse).
func compile(path string) (*jsonschema.Schema, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	doc, err := jsonschema.UnmarshalJSON(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	compiler := jsonschema.NewCompiler()
	compiler.AssertFormat()
	if err := compiler.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		return nil, err
	}
	return compiler.Compile("sarif-schema-2.1.0.json")
}

// validate checks the JSON document at path.
func validate(schema *jsonschema.Schema, path string) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	doc, err := jsonschema.UnmarshalJSON(file)
	if err != nil {
		return err
	}
	return schema.Validate(doc)
}
