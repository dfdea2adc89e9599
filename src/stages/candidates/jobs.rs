//! The texts of the SQL jobs that the methods name as plain data
//! ([`MethodJob`]) and of the chain walk they and the history's match
//! splice in (`jobs/chain_links.sql`): the one module that includes those
//! files of `jobs/`, beside the `candidates` stage that runs them. The
//! history's `history_candidates` stage reads them from here too.

use crate::methods::registry::{self, MethodJob};
use crate::methods::settings::{CandidatesConfig, MethodsConfig};

/// The chain walk (`jobs/chain_links.sql`): the CTEs that link each probe
/// of a length-ordered chain to the members at its next `max_edges`
/// places, never to all. The jobs that walk chains include it as their
/// `${chain_links}` parameter (`candidates_exact.sql`, `a11_pairs.sql`,
/// `a12.sql`, `history_edges.sql`); it reads `${max_edges}` itself, so it
/// comes before that parameter in a list given to
/// [`crate::tables::sql::substitute`] ([`chain_walk_params`]).
pub const CHAIN_LINKS: &str = include_str!("../../../jobs/chain_links.sql");

/// The text of a method's own job: its file of `jobs/`.
pub fn method_job_sql(job: MethodJob) -> &'static str {
    match job {
        MethodJob::A11Shingles => include_str!("../../../jobs/a11_shingles.sql"),
        MethodJob::A11Chains => include_str!("../../../jobs/a11_chains.sql"),
        MethodJob::A11Pairs => include_str!("../../../jobs/a11_pairs.sql"),
        MethodJob::A11Edges => include_str!("../../../jobs/a11.sql"),
        MethodJob::A11Groups => include_str!("../../../jobs/a11_groups.sql"),
        MethodJob::A11Keys => include_str!("../../../jobs/a11_keys.sql"),
        MethodJob::A11RareShingles => include_str!("../../../jobs/a11_rare_shingles.sql"),
        MethodJob::A12Edges => include_str!("../../../jobs/a12.sql"),
        MethodJob::A12Groups => include_str!("../../../jobs/a12_groups.sql"),
        MethodJob::A12Keys => include_str!("../../../jobs/a12_keys.sql"),
        MethodJob::MinhashEdges => include_str!("../../../jobs/minhash_edges.sql"),
    }
}

/// The `${name}` parameters of the jobs that walk chains: the chain walk's
/// text first (it reads the parameters after it), then the bounds and the
/// methods' settings ([`registry::sql_params`]). `probes` names the
/// relation each chain is probed with ([`registry::WALK_THROUGH_ITSELF`]
/// for the candidate jobs, the night's pages for the history's match).
pub fn chain_walk_params(
    methods: &MethodsConfig,
    candidates: &CandidatesConfig,
    probes: &'static str,
) -> Vec<(&'static str, String)> {
    let mut params = vec![("chain_links", CHAIN_LINKS.to_string())];
    params.extend(registry::sql_params(methods, candidates, probes));
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::registry::{Edges, SqlJob, METHODS};

    /// Every job a method names has a text of its own, and the chain walk's
    /// text is substituted before the parameters it reads.
    #[test]
    fn each_method_job_has_its_own_text_and_the_walk_comes_first() {
        let mut texts = std::collections::BTreeMap::new();
        for m in METHODS {
            let mut named: Vec<MethodJob> = Vec::new();
            if let Edges::Sql { jobs, .. } = &m.edges {
                named.extend(jobs.iter().map(|job| match job {
                    SqlJob::View(_, job) | SqlJob::Table(_, job) => *job,
                }));
            }
            if let Some(keys) = &m.history_keys {
                named.extend([keys.sql].into_iter().chain(keys.night));
            }
            for job in named {
                let text = method_job_sql(job);
                assert!(!text.trim().is_empty(), "{job:?} has no text");
                assert_eq!(*texts.entry(text).or_insert(job), job, "two jobs share one text");
            }
        }
        assert_eq!(texts.len(), 11);
        let params = chain_walk_params(&MethodsConfig::default(), &CandidatesConfig::default(), "chain");
        assert_eq!(params[0].0, "chain_links");
        assert!(params.iter().any(|(name, _)| *name == "max_edges"));
    }
}
