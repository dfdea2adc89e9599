//! Stage `search`: `tokens`, `exact_copies` → `method_pairs`.
//!
//! The methods that find their pairs by a search of their own rather than
//! by equal signatures ([`registry::MethodSpec::search`]): SpotSigs (shared
//! spot signatures, multiset Jaccard) and SL+ST (shared runs of m
//! sentences, verified blocks). Both are bounded like every method
//! (`candidates.max_edges_per_document`): a bounded number of comparisons
//! per document, and each document's strongest edges kept.
//!
//! Only the first of each exact group is searched: the token passes leave
//! the exact copies out, so no bound is spent on them.
//!
//! Both search by keys ([`crate::methods::KeyedSearch`]), in bounded
//! memory: [`crate::methods::keyed`].

use anyhow::Result;
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::inputs::tokens::TokenPasses;
use crate::methods::keyed::KeyedRun;
use crate::methods::registry;
use crate::methods::PairMethod;
use crate::runner::{RunContext, Stage, StageReport};
use crate::tables::columns::method_pairs;
use crate::tables::write::TableOutput;

/// The search stage.
pub struct Search;

impl Stage for Search {
    fn name(&self) -> &'static str {
        "search"
    }
    fn inputs(&self) -> Vec<&'static str> {
        vec!["tokens", "exact_copies"]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec!["method_pairs"]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"methods": config.methods, "max_edges_per_document": config.candidates.max_edges_per_document})
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        let bound = ctx.config.candidates.edge_bound();
        // In registry order, whatever the order of `enabled`, as before.
        let searches: Vec<Box<dyn PairMethod>> = registry::METHODS
            .iter()
            .filter(|m| ctx.config.methods.is_enabled(m.id))
            .filter_map(|m| m.search.map(|build| build(&ctx.config.methods)))
            .collect();
        let session = ctx.runtime.block_on(ctx.session())?;
        let mut report = StageReport::default();
        let mut w = TableOutput::<method_pairs::Rows>::create(&ctx.out)?;
        for search in &searches {
            // One pass over the token lists the search reads, a chunk at a
            // time; the search keeps its compact form of each document, or
            // writes it to disk.
            let passes = TokenPasses::new(&ctx.runtime, session.clone(), search.reads());
            let started = std::time::Instant::now();
            let run = KeyedRun { runtime: &ctx.runtime, session: &session, out: &ctx.out, id: search.id(), bound };
            let found = run.find_pairs(search.keyed(), &passes, &mut report.counters);
            // A pass that failed explains a failed search: its error first.
            passes.finish()?;
            let found = found?;
            report.counters.insert(format!("{}_search_ms", search.id()), started.elapsed().as_millis() as u64);
            report.counters.insert(format!("{}_pairs_found", search.id()), found.len() as u64);
            let pairs = bound.keep_strongest(found);
            report.counters.insert(format!("{}_pairs", search.id()), pairs.len() as u64);
            for p in pairs {
                w.push(|b| {
                    b.method.append_value(search.id());
                    b.doc_a.append_value(p.doc_a);
                    b.doc_b.append_value(p.doc_b);
                    b.score.append_value(p.score);
                })?;
            }
        }
        report.rows.insert(method_pairs::TABLE.into(), w.commit()?);
        Ok(report)
    }
}
