//! RFC 6902 JSON Patch, as the apiserver applies it (evanphx/json-patch).
