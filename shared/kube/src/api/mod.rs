//! The API layer: what the server serves and how objects are named and read.
//!
//! - [`discovery`]: resource types (kubectl's short names, plurals, groups), cached 6 h.
//! - [`openapi`]: the server's own schema, for custom resources and newer types.
//! - [`media_type`]: the Content-Types that tell the four patch flavours apart.
//! - [`target`]: `TYPE/NAME` and `TYPE NAME` arguments as kubectl parses them.
//! - [`reference`](mod@reference): the one object reference, from arguments, manifests or
//!   owner references, with kubectl's namespace rules.
//! - [`manifests`]: `-f FILE|DIR|-` documents.
//! - [`objects`]: GET and LIST of whole objects, with pagination.
//! - [`metadata_list`]: metadata-only lists, for scans that read only a few fields.
//! - [`selection`]: the objects a command acts on, named, selected (`-l`, `--all`, `-A`) or from `-f`.

pub mod discovery;
pub mod manifests;
pub mod media_type;
pub mod metadata_list;
pub mod objects;
pub mod openapi;
pub mod reference;
pub mod selection;
pub mod target;
