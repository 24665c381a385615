//! [`report_package`]: what a package holds and what was found of it, for people to look at
//! (`webaip report`).

pub use crate::report::captures::{CaptureSource, Captures, Count, Ranked, SizeClass};
pub use crate::report::collection::{
    BatchFacts as CollectionBatchFacts, Check as CollectionCheck, CollectionError, CollectionInput,
    CollectionOptions, CollectionOutput, CollectionSummary, CollectionTotals, FailedItem,
    OldestCheck, PAGE_ROWS as COLLECTION_PAGE_ROWS, PackageRow, RowOrigin,
    StoreFacts as CollectionStoreFacts, Verdict as CollectionVerdict, refuse_collection_output,
    report_collection,
};
pub use crate::report::collection::{
    BatchState, KeptAt as CollectionKeptAt, SizeClassCount, YearCount,
};
pub use crate::report::mets::{AgentFact, AgentLink, EventFact, FolderCount, HeaderAgent};
pub use crate::report::quirks::{QuirkExample, QuirkKind, Quirks};
pub use crate::report::{
    AuditOutcome, Deduplication, EventOutcome, Identification, Identity, MetsVerdict, PageFact,
    ReportError, ReportFacts, ReportOptions, ReportProgress, Verdicts, refuse_report_output,
    report_package, write_html_file as write_report_html,
};
pub use crate::store::state::ReplicaCopies;
