//! The pipeline's stages, one module each, in run order.

pub mod blocks;
pub mod boilerplate;
pub mod candidates;
pub mod decide;
pub mod descr_sample;
pub mod evaluate;
pub mod exact;
pub mod history;
pub mod ingest;
pub mod method_state;
pub mod search;
pub mod search_groups;
pub mod search_keys;
pub mod search_links;
pub mod signatures;
pub mod stage;
pub mod stats;
pub mod tokens;
pub mod verify;

use stage::Stage;

/// Every stage of a run in run order (`--stage all` runs them in this
/// order); a run with `--history` runs [`history::stages`] after
/// them.
pub fn all() -> Vec<Box<dyn Stage>> {
    vec![
        Box::new(ingest::Ingest),
        Box::new(blocks::Blocks),
        Box::new(boilerplate::Boilerplate),
        Box::new(tokens::Tokens),
        Box::new(exact::Exact),
        Box::new(stats::Stats),
        Box::new(descr_sample::DescrSample),
        Box::new(method_state::MethodState),
        Box::new(signatures::Signatures),
        Box::new(search_keys::SearchKeys),
        Box::new(search_groups::SearchGroups),
        Box::new(search_links::SearchLinks),
        Box::new(search::Search),
        Box::new(candidates::Candidates),
        Box::new(verify::pairs::VerifyPairs),
        Box::new(verify::Verify),
        Box::new(verify::place::Place),
        Box::new(decide::Decide),
        Box::new(evaluate::Evaluate),
    ]
}
