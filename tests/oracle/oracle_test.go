package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// answer runs one case line through the oracle's stream loop.
func answer(t *testing.T, line string) map[string]interface{} {
	t.Helper()
	var out bytes.Buffer
	// Cases are written over several lines here for reading; the stream takes one a line.
	oneLine := strings.NewReplacer("\n", "", "\t", "").Replace(line)
	if err := serve(strings.NewReader(oneLine+"\n"), &out); err != nil {
		t.Fatalf("serve: %v", err)
	}
	var result map[string]interface{}
	if err := json.Unmarshal(out.Bytes(), &result); err != nil {
		t.Fatalf("result %q is not JSON: %v", out.String(), err)
	}
	return result
}

// compact re-encodes a result field for comparison with an expected text.
func compact(t *testing.T, v interface{}) string {
	t.Helper()
	encoded, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(encoded)
}

func TestStreamsOneResultPerCaseInOrder(t *testing.T) {
	input := `{"id":1,"op":"merge_patch.apply","doc":{"a":1},"patch":{"a":null}}
{"id":2,"op":"nope"}

{"id":3,"op":"json_patch.apply","doc":{},"patch":[{"op":"add","path":"/x","value":1}]}
`
	var out bytes.Buffer
	if err := serve(strings.NewReader(input), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 results, got %d: %q", len(lines), out.String())
	}
	for i, want := range []string{`"id":1`, `"id":2`, `"id":3`} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("result %d = %s, want %s", i, lines[i], want)
		}
	}
}

func TestJSONPatchKeepsNumbersAndSupportsNegativeIndices(t *testing.T) {
	r := answer(t, `{"op":"json_patch.apply","doc":{"a":[1,2,3]},"patch":[{"op":"remove","path":"/a/-1"},{"op":"add","path":"/n","value":9007199254740993}]}`)
	var out bytes.Buffer
	_ = serve(strings.NewReader(`{"op":"json_patch.apply","doc":{"a":[1,2,3]},"patch":[{"op":"add","path":"/n","value":9007199254740993}]}`+"\n"), &out)
	if !strings.Contains(out.String(), "9007199254740993") {
		t.Errorf("big integer not preserved: %s", out.String())
	}
	if got := compact(t, r["result"].(map[string]interface{})["a"]); got != "[1,2]" {
		t.Errorf("negative index remove gave %s, want [1,2]", got)
	}
}

func TestJSONPatchRejectsMissingPath(t *testing.T) {
	r := answer(t, `{"op":"json_patch.apply","doc":{},"patch":[{"op":"remove","path":"/missing"}]}`)
	if r["error"] == nil || r["result"] != nil {
		t.Errorf("want an error, got %v", r)
	}
}

func TestMergePatchRejectsNullPatch(t *testing.T) {
	r := answer(t, `{"op":"merge_patch.apply","doc":{"a":1},"patch":null}`)
	if r["error"] != "Invalid JSON Patch" {
		t.Errorf("want Invalid JSON Patch, got %v", r)
	}
}

func TestStrategicApplyMergesContainersByName(t *testing.T) {
	r := answer(t, `{"op":"strategic.apply","gvk":{"group":"apps","version":"v1","kind":"Deployment"},
		"original":{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x"}]}}}},
		"patch":{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"y"}]}}}}}`)
	want := `{"spec":{"template":{"spec":{"containers":[{"image":"y","name":"b"},{"image":"x","name":"a"}]}}}}`
	if got := compact(t, r["result"]); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestStrategicThreeWayDeletesFromPrimitiveList(t *testing.T) {
	r := answer(t, `{"op":"strategic.create_three_way","gvk":{"group":"","version":"v1","kind":"Pod"},
		"original":{"metadata":{"finalizers":["a"]}},"modified":{"metadata":{"finalizers":["b"]}},
		"current":{"metadata":{"finalizers":["a","c"]}},"overwrite":true}`)
	want := `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"],"$setElementOrder/finalizers":["b"],"finalizers":["b"]}}`
	if got := compact(t, r["result"]); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestFieldpathRoundtripSortsMembers(t *testing.T) {
	r := answer(t, `{"op":"fieldpath.roundtrip","fieldsV1":"{\"f:b\":{},\"f:a\":{}}"}`)
	if r["encoded"] != `{"f:a":{},"f:b":{}}` {
		t.Errorf("got %v", r)
	}
}

func TestFieldpathFromValueUsesListMapKeys(t *testing.T) {
	r := answer(t, `{"op":"fieldpath.from_value","gvk":{"group":"","version":"v1","kind":"ConfigMap"},
		"object":{"apiVersion":"v1","kind":"ConfigMap","data":{"k":"v"}}}`)
	want := `{"f:apiVersion":{},"f:data":{"f:k":{}},"f:kind":{}}`
	if r["fieldsV1"] != want {
		t.Errorf("got %v, want %s", r, want)
	}
}

func TestYAMLStreamReadsYAML11LikeKubectl(t *testing.T) {
	r := answer(t, `{"op":"yaml.stream","text":"y: 2\n---\na: on\n---\n"}`)
	if got := compact(t, r["result"]); got != `[{"true":2},{"a":true}]` {
		t.Errorf("got %s", got)
	}
	r = answer(t, `{"op":"yaml.stream","text":"a: .inf\n"}`)
	if r["error"] == nil {
		t.Errorf("want an error for .inf, got %v", r)
	}
}

func TestYAMLToJSONReadsTheFirstDocumentOnly(t *testing.T) {
	r := answer(t, `{"op":"yaml.to_json","text":"a: 0777\n---\nb: 1\n"}`)
	if got := compact(t, r["result"]); got != `{"a":511}` {
		t.Errorf("got %s", got)
	}
}
