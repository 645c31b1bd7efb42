package main

import (
	"bytes"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// decodeSet reads FieldsV1 text as the apiserver reads managedFields entries.
func decodeSet(raw *string) (*fieldpath.Set, error) {
	if raw == nil {
		return nil, errors.New("missing FieldsV1")
	}
	set := &fieldpath.Set{}
	if err := set.FromJSON(bytes.NewReader([]byte(*raw))); err != nil {
		return nil, err
	}
	return set, nil
}

// encodedSet is the result carrying a set's FieldsV1 text.
func encodedSet(set *fieldpath.Set) Result {
	encoded, err := set.ToJSON()
	if err != nil {
		return rejected(err)
	}
	text := string(encoded)
	return Result{Encoded: &text}
}

// fieldpathRoundtrip decodes FieldsV1 with fieldpath.Set.FromJSON and encodes
// it again with ToJSON.
func fieldpathRoundtrip(raw *string) Result {
	set, err := decodeSet(raw)
	if err != nil {
		return rejected(err)
	}
	return encodedSet(set)
}

// fieldpathSetOp combines two decoded sets.
func fieldpathSetOp(a, b *string, op string) Result {
	left, err := decodeSet(a)
	if err != nil {
		return rejected(fmt.Errorf("a: %w", err))
	}
	right, err := decodeSet(b)
	if err != nil {
		return rejected(fmt.Errorf("b: %w", err))
	}
	switch op {
	case "union":
		return encodedSet(left.Union(right))
	case "intersection":
		return encodedSet(left.Intersection(right))
	case "difference":
		return encodedSet(left.Difference(right))
	default:
		return Result{Error: fmt.Sprintf("oracle: unknown set op %q", op), BadCase: true}
	}
}

// typeConverter reads objects through the built-in schema: client-go's
// applyconfigurations embed the structured-merge-diff schema of every
// built-in type, generated from the same OpenAPI models the apiserver serves.
var typeConverter = applyconfigurations.NewTypeConverter(scheme.Scheme)

// fieldpathFromValue is the set of fields an object sets under the built-in
// schema: ObjectToTyped (with typed.AllowDuplicates, as the apiserver's field
// manager does for updates) then TypedValue.ToFieldSet. Nothing is stripped
// (the field manager later drops apiVersion, kind and some metadata; that is
// ownership policy, compared elsewhere).
func fieldpathFromValue(gvk *GVK, object []byte) Result {
	if gvk == nil {
		return Result{Error: "oracle: case has no gvk", BadCase: true}
	}
	content := map[string]interface{}{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(object, &content); err != nil {
		return Result{Error: "oracle: object: " + err.Error(), BadCase: true}
	}
	obj := &unstructured.Unstructured{Object: content}
	// The object's own apiVersion and kind pick its type, as on the server;
	// gvk only guards against a generator writing one and meaning another.
	want := gvk.Version
	if gvk.Group != "" {
		want = gvk.Group + "/" + gvk.Version
	}
	if obj.GetAPIVersion() != want || obj.GetKind() != gvk.Kind {
		return Result{Error: fmt.Sprintf("oracle: object is %s %s, case says %s %s",
			obj.GetAPIVersion(), obj.GetKind(), want, gvk.Kind), BadCase: true}
	}
	tv, err := typeConverter.ObjectToTyped(obj, typed.AllowDuplicates)
	if err != nil {
		return rejected(err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		return rejected(err)
	}
	encoded, err := set.ToJSON()
	if err != nil {
		return rejected(err)
	}
	text := string(encoded)
	return Result{FieldsV1: &text}
}
