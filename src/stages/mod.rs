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
        Box::new(search::keys::SearchKeys),
        Box::new(search::groups::SearchGroups),
        Box::new(search::links::SearchLinks),
        Box::new(search::score::Search),
        Box::new(candidates::Candidates),
        Box::new(verify::pairs::VerifyPairs),
        Box::new(verify::Verify),
        Box::new(verify::place::Place),
        Box::new(decide::Decide),
        Box::new(evaluate::Evaluate),
    ]
}

/// The stages of a run in run order: [`all`], and with `with_history` the
/// history's stages ([`history::stages`]) before the stages that
/// read their tables ([`history::FOLLOWING`]). `run`, `status` and
/// `history match` all order and plan their stages by this one list.
pub fn in_run_order(with_history: bool) -> Vec<Box<dyn Stage>> {
    let all = all();
    if !with_history {
        return all;
    }
    let (following, mut order): (Vec<_>, Vec<_>) =
        all.into_iter().partition(|s| history::FOLLOWING.contains(&s.name()));
    order.extend(history::stages());
    order.extend(following);
    order
}

/// The names of the stages of the history phase, run under the history's
/// lock: the history's own stages, and with `with_history` the stages that
/// follow them ([`history::FOLLOWING`]); without a history, only the
/// former, which such a run refuses by name.
pub fn history_phase(with_history: bool) -> Vec<&'static str> {
    let own = history::stages().into_iter().map(|s| s.name());
    let following = history::FOLLOWING.into_iter().filter(|_| with_history);
    own.chain(following).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table a stage reads is written by a stage before it in run
    /// order, with and without the history: the types make every name one
    /// with a schema, this makes it one that some stage writes in time (a
    /// stage reading a table written later, or by no stage, would never
    /// find its input).
    #[test]
    fn every_input_is_written_by_an_earlier_stage() {
        let config = crate::config::Config::default();
        for with_history in [false, true] {
            let mut written = std::collections::BTreeSet::new();
            for stage in in_run_order(with_history) {
                for table in stage.inputs() {
                    assert!(
                        written.contains(&table),
                        "stage {} reads `{table}`, which no earlier stage writes (history: {with_history})",
                        stage.name()
                    );
                }
                written.extend(stage.outputs(&config));
            }
        }
    }
}
