//! Where the pipeline's files live: object-store locations ([`location`]:
//! `s3://`, `file://`, read through the `object_store` crate) and
//! per-document records spilled to local disk ([`spilled_docs`]).

pub mod disk_array;
pub mod location;
pub mod spilled_docs;
