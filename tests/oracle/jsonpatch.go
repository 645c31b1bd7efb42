package main

import (
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// maxJSONPatchOperations is the apiserver's limit on operations in one JSON
// patch (k8s.io/apiserver/pkg/endpoints/handlers/patch.go).
const maxJSONPatchOperations = 10000

// jsonPatchApply applies an RFC 6902 patch the way the apiserver's
// jsonPatcher.applyJSPatch does for application/json-patch+json: DecodePatch,
// the operation limit, then Patch.Apply with the library's package defaults
// (SupportNegativeIndices = true, AccumulatedCopySizeLimit = 0), which the
// apiserver never changes. Strict field validation is not modelled (it only
// adds warnings about duplicate or unknown fields of the operations).
func jsonPatchApply(doc, patch []byte) Result {
	ops, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return rejected(err)
	}
	if len(ops) > maxJSONPatchOperations {
		return rejected(fmt.Errorf("The allowed maximum operations in a JSON patch is %d, got %d",
			maxJSONPatchOperations, len(ops)))
	}
	patched, err := ops.Apply(doc)
	if err != nil {
		return rejected(err)
	}
	return accepted(patched)
}
