//! RFC 7386 JSON Merge Patch: apply, and create two-way and three-way patches
//! the way `k8s.io/apimachinery/pkg/util/jsonmergepatch` does.
