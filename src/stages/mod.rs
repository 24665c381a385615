//! Stages that look at or change captures on their way into a package.

pub mod rewrite;
pub mod scan;
