package main

import (
	"encoding/json"
	"fmt"
)

// Case is one question for the oracle. Which fields are read depends on Op.
// JSON documents are kept as raw bytes so numbers reach upstream exactly as
// written (upstream decodes them itself, each engine in its own way).
type Case struct {
	// ID is echoed back in the result, for the caller's bookkeeping.
	ID json.RawMessage `json:"id,omitempty"`
	// Op names the engine and the function, e.g. "json_patch.apply".
	Op string `json:"op"`

	Doc      json.RawMessage `json:"doc,omitempty"`
	Patch    json.RawMessage `json:"patch,omitempty"`
	Original json.RawMessage `json:"original,omitempty"`
	Modified json.RawMessage `json:"modified,omitempty"`
	Current  json.RawMessage `json:"current,omitempty"`
	Object   json.RawMessage `json:"object,omitempty"`
	GVK      *GVK            `json:"gvk,omitempty"`
	// Overwrite is strategic.create_three_way's overwrite flag.
	Overwrite bool `json:"overwrite,omitempty"`

	// FieldsV1 is the raw FieldsV1 text for fieldpath.roundtrip.
	FieldsV1 *string `json:"fieldsV1,omitempty"`
	// A and B are raw FieldsV1 texts for fieldpath.set_op.
	A *string `json:"a,omitempty"`
	B *string `json:"b,omitempty"`
	// SetOp is union, intersection or difference, for fieldpath.set_op.
	SetOp string `json:"set_op,omitempty"`

	// Text is the YAML (or JSON) text for yaml.stream and yaml.to_json.
	Text *string `json:"text,omitempty"`
}

// GVK names a built-in type.
type GVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// Result is the oracle's answer to one case.
type Result struct {
	ID json.RawMessage `json:"id,omitempty"`
	// Result is the patched document or the created patch.
	Result json.RawMessage `json:"result,omitempty"`
	// Encoded is the re-encoded FieldsV1 text (fieldpath.roundtrip, fieldpath.set_op).
	Encoded *string `json:"encoded,omitempty"`
	// FieldsV1 is the field set of an object (fieldpath.from_value).
	FieldsV1 *string `json:"fieldsV1,omitempty"`
	// Error is upstream's error text when it rejects the case.
	Error string `json:"error,omitempty"`
	// Panic is set when upstream panicked on the case.
	Panic bool `json:"panic,omitempty"`
	// BadCase is set when the line was not a well-formed case.
	BadCase bool `json:"bad_case,omitempty"`
}

// run dispatches a case to its engine.
func run(c *Case) Result {
	switch c.Op {
	case "json_patch.apply":
		return jsonPatchApply(c.Doc, c.Patch)
	case "merge_patch.apply":
		return mergePatchApply(c.Doc, c.Patch)
	case "merge_patch.create_two_way":
		return mergePatchCreateTwoWay(c.Original, c.Modified)
	case "merge_patch.create_three_way":
		return mergePatchCreateThreeWay(c.Original, c.Modified, c.Current)
	case "strategic.apply":
		return strategicApply(c.GVK, c.Original, c.Patch)
	case "strategic.create_two_way":
		return strategicCreateTwoWay(c.GVK, c.Original, c.Modified)
	case "strategic.create_three_way":
		return strategicCreateThreeWay(c.GVK, c.Original, c.Modified, c.Current, c.Overwrite)
	case "fieldpath.roundtrip":
		return fieldpathRoundtrip(c.FieldsV1)
	case "fieldpath.set_op":
		return fieldpathSetOp(c.A, c.B, c.SetOp)
	case "fieldpath.from_value":
		return fieldpathFromValue(c.GVK, c.Object)
	case "yaml.stream":
		return yamlStream(c.Text)
	case "yaml.to_json":
		return yamlToJSON(c.Text)
	default:
		return Result{Error: fmt.Sprintf("oracle: unknown op %q", c.Op), BadCase: true}
	}
}

// rejected is the result for an upstream error.
func rejected(err error) Result {
	return Result{Error: err.Error()}
}

// accepted is the result for an upstream JSON answer.
func accepted(doc []byte) Result {
	if !json.Valid(doc) {
		return Result{Error: fmt.Sprintf("oracle: upstream returned invalid JSON %q", doc), BadCase: true}
	}
	return Result{Result: json.RawMessage(doc)}
}
