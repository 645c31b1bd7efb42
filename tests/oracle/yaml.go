package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// yamlStream reads text the way `kubectl apply -f` / `kubectl create -f` read a
// file: cli-runtime's StreamVisitor runs k8s.io/apimachinery's
// YAMLOrJSONDecoder (4096-byte JSON sniff, `---` line splitting, each YAML
// document through sigs.k8s.io/yaml's YAMLToJSON on go-yaml v2) into a
// runtime.RawExtension, trims it, and skips empty and null documents. The
// result is the JSON array of the documents kubectl goes on to map to objects.
//
// The file visitor's BOM handling happens before the stream visitor; a caller
// that wants it strips a leading BOM itself.
func yamlStream(text *string) Result {
	if text == nil {
		return Result{Error: "oracle: yaml.stream needs text", BadCase: true}
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(*text), 4096)
	documents := []json.RawMessage{}
	for {
		ext := runtime.RawExtension{}
		if err := decoder.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return rejected(err)
		}
		ext.Raw = bytes.TrimSpace(ext.Raw)
		if len(ext.Raw) == 0 || bytes.Equal(ext.Raw, []byte("null")) {
			continue
		}
		if !json.Valid(ext.Raw) {
			// kubectl would hand these bytes on and fail later, on its own words.
			return rejected(fmt.Errorf("document %d is not valid JSON: %q", len(documents)+1, ext.Raw))
		}
		var object interface{}
		if err := json.Unmarshal(ext.Raw, &object); err != nil {
			// A number no float64 holds (1e400): the stream decoder passes it,
			// kubectl fails as soon as it decodes the object.
			return rejected(fmt.Errorf("document %d: %w", len(documents)+1, err))
		}
		documents = append(documents, json.RawMessage(ext.Raw))
	}
	encoded, err := json.Marshal(documents)
	if err != nil {
		return rejected(err)
	}
	return accepted(encoded)
}

// yamlToJSON converts one document the way kubectl reads a patch file
// (`kubectl patch --patch-file`) or `--patch` text: k8s.io/apimachinery's
// yaml.ToJSON, which passes text that starts with `{` through untouched and
// runs everything else through sigs.k8s.io/yaml's YAMLToJSON (go-yaml v2, first
// document only). Passed-through text that is not JSON is rejected here, as
// the apiserver rejects it.
func yamlToJSON(text *string) Result {
	if text == nil {
		return Result{Error: "oracle: yaml.to_json needs text", BadCase: true}
	}
	converted, err := utilyaml.ToJSON([]byte(*text))
	if err != nil {
		return rejected(err)
	}
	if !json.Valid(converted) {
		return rejected(fmt.Errorf("not valid JSON: %q", converted))
	}
	var object interface{}
	if err := json.Unmarshal(converted, &object); err != nil {
		// A number no float64 holds: the apiserver fails to decode the patch.
		return rejected(err)
	}
	var compacted bytes.Buffer
	if err := json.Compact(&compacted, converted); err != nil {
		return rejected(err)
	}
	return accepted(compacted.Bytes())
}
