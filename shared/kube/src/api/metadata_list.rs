//! Lists of object metadata only (`PartialObjectMetadataList`): names, labels,
//! annotations and managedFields without the bodies, so a scan over every type
//! in a cluster moves a fraction of the bytes a full list would.

use serde_json::Value;

use crate::api::discovery::ResourceType;
use crate::api::objects::{list_as, ListOptions};
use crate::conn::client::Connection;
use crate::error::Result;

/// The Accept header that asks the apiserver for metadata-only lists.
pub const PARTIAL_METADATA_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// Lists the metadata of every object of a type in `namespace` (all namespaces when `None`),
/// following `continue` tokens. Items get the type's `apiVersion` and `kind` back (the server
/// answers `meta.k8s.io/v1 PartialObjectMetadata`), so they read like full objects without bodies.
pub async fn list_metadata(
    conn: &Connection,
    resource: &ResourceType,
    namespace: Option<&str>,
    options: &ListOptions,
) -> Result<Vec<Value>> {
    list_as(conn, resource, namespace, options, Some(PARTIAL_METADATA_LIST)).await
}
