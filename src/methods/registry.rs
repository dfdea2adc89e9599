//! The one place that knows the methods: one [`MethodSpec`] per id says
//! how the method is built, which tables it writes, where `candidates` finds
//! its edges and which settings its SQL reads. The stages (`stats`,
//! `signatures`, `search`, `candidates`, `verify`, `evaluate`) walk this
//! list and name no method; adding a method is its file, its entry here and
//! its settings in [`MethodsConfig`].
//!
//! A method has up to three parts, each optional:
//! - a **signer** ([`SignatureMethod`]): signatures per document, written to
//!   `signatures` by the `signatures` stage; documents sharing one are
//!   linked by `jobs/candidates_exact.sql`;
//! - **records** ([`RecordMethod`]): rows of a table of its own (minhash's
//!   sketches, a11's shingles, a12's records), also written by `signatures`,
//!   that its SQL jobs pair; records may give the method's signatures too
//!   (minhash's bands come from its sketch), in place of a signer;
//! - a **search** ([`PairMethod`]): its own search by keys in bounded
//!   memory ([`crate::methods::KeyedSearch`]), run by the `search` stage
//!   into `method_pairs`.
//!
//! [`Edges`] says which of them give its candidate edges.

use super::settings::{CandidatesConfig, MethodsConfig};
use super::traits::RecordMethod;
use super::{
    a11, a12, descr, imatch, sentences, shingles, slst, spotsigs, topwords, whole, CorpusStats, DocView, PairMethod,
    Signature, SignatureMethod, StateRow, TokenParts,
};
use crate::settings::Problems;
use crate::tables::columns::{a11_chains, a11_pairs, a12_records, shingles as shingles_table};
use crate::tables::write::Rows;
use crate::tables::Table;
use anyhow::Result;
use arrow::array::RecordBatch;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// Everything the pipeline knows about one method.
pub struct MethodSpec {
    /// The id used everywhere (`--methods`, the `method` columns).
    pub id: &'static str,
    /// What the method is, in a few words (the study's name first where it
    /// has one), shown beside the id wherever a user reads it: `--help`,
    /// `explain`, the report ([`title`]).
    pub name: &'static str,
    /// Builds the method's signer from the settings and the corpus
    /// statistics; its state comes from [`StateInput`].
    pub signer: Option<BuildSigner>,
    /// What the signer or the records read of each document beyond its
    /// terms: the `signatures` stage reads and computes only what an
    /// enabled method reads.
    pub reads: DocReads,
    /// Whether building the signer needs a pass over the documents (a9
    /// chooses its descriptive words from them). Such a state is built once
    /// by stage `method_state`, saved in its table, and read back by every task of
    /// `signatures`.
    pub state_reads_documents: bool,
    /// The method's table of per-document records.
    pub records: Option<Records>,
    /// Builds the method's own search.
    pub search: Option<BuildSearch>,
    /// Where `candidates` takes the method's edges from.
    pub edges: Edges,
    /// Whether the method's comparison is part of the method: its found pairs
    /// are the candidate pairs that pass verification's similarity, not every
    /// pair it proposes. A11 (study §6.1): "Документы внутри цепочки сравниваем
    /// попарно (например, путем использования функции Perl Similarity ...)"
    /// (the documents of a chain are compared pairwise), and the number of
    /// comparisons is the method's cost. `verify` compares every candidate
    /// pair of such a method (counted as `<method>_comparisons`); `evaluate`
    /// counts only the pairs that passed.
    pub includes_comparison: bool,
    /// The `${name}` parameters the method's SQL jobs read, from its
    /// settings; they are part of the `candidates` stage's configuration.
    pub sql_params: fn(&MethodsConfig) -> Vec<(&'static str, String)>,
    /// How the night's records of the method meet the records the history
    /// keeps of earlier crawls (`--history`), beside the shared signatures
    /// every signer gives.
    pub history_keys: Option<HistoryKeys>,
}

/// What a signer or a records writer reads of a document ([`DocView`])
/// beyond its terms and sentence ends, which every one reads. `words` is
/// the largest list of `tokens` (about twice `terms`), and term ids cost a
/// dictionary lookup of every term: a run of methods that read neither
/// (minhash, a11, the shingle and sentence methods) skips both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocReads {
    /// [`DocView::words`].
    pub words: bool,
    /// [`DocView::term_ids`] and [`DocView::term_counts`], looked up in the
    /// `df` dictionary.
    pub term_ids: bool,
}

impl DocReads {
    /// Terms and sentence ends only.
    pub const TERMS: DocReads = DocReads { words: false, term_ids: false };
    /// Terms with their ids and counts.
    pub const TERM_IDS: DocReads = DocReads { words: false, term_ids: true };

    /// What either of two readers reads.
    pub fn and(self, other: DocReads) -> DocReads {
        DocReads { words: self.words || other.words, term_ids: self.term_ids || other.term_ids }
    }
}

/// A method's records as group keys for matching a night against the
/// history (`jobs/history_edges.sql`): an SQL job over `${records}` giving
/// (method, slot, sig, doc_id, doc_len, crawl), run once over the night's
/// records with an empty `${crawl}` and once over the history's copy of
/// table `kept` with its crawl.
pub struct HistoryKeys {
    /// The job giving the keys from `${records}` (its text is the stage's:
    /// [`MethodJob`]).
    pub sql: MethodJob,
    /// The night's records: an SQL job over its tables giving the columns
    /// `sql` reads (registered as view `night_<kept>`), or `None` for its
    /// table `kept` as it is.
    pub night: Option<MethodJob>,
    /// The records table the history keeps.
    pub kept: Table,
}

impl MethodSpec {
    /// Whether the method writes rows of `signatures`, from a signer or
    /// from its records.
    pub fn writes_signatures(&self) -> bool {
        self.signer.is_some() || self.records.as_ref().is_some_and(|r| r.signs)
    }
}

/// Builds a signer: settings, corpus statistics, the method's state input.
pub type BuildSigner = fn(&MethodsConfig, &CorpusStats, StateInput<'_>) -> Box<dyn SignatureMethod>;

/// Builds a search from the settings.
pub type BuildSearch = fn(&MethodsConfig) -> Box<dyn PairMethod>;

/// A method's table of per-document records: its name, and how the
/// `signatures` stage builds the method that makes its rows.
pub struct Records {
    /// The table (its schema file is `schemas/<table>.json`).
    pub table: Table,
    /// Builds the method from the settings, with no rows pending.
    pub build: fn(&MethodsConfig) -> Box<dyn RecordRows>,
    /// The records give the method's signatures too ([`RecordMethod::SIGNS`]).
    pub signs: bool,
}

impl Records {
    /// The records of method type `M`, the rows of its rows' table.
    const fn of<M: RecordMethod + FromMethodsConfig>() -> Records {
        Records { table: M::Rows::TABLE, build: build_records::<M>, signs: M::SIGNS }
    }
}

/// How the registry builds a [`RecordMethod`] from the settings: the one
/// place that reads `[methods]` for it, as the builder closures of the
/// signers and searches below do for theirs (the method's file knows only
/// its family's settings).
trait FromMethodsConfig {
    fn from_config(cfg: &MethodsConfig) -> Self;
}

impl FromMethodsConfig for a11::ShingleRecords {
    fn from_config(cfg: &MethodsConfig) -> Self {
        a11::ShingleRecords::new(cfg.shingles.shingle_width)
    }
}

impl FromMethodsConfig for a12::A12Records {
    fn from_config(_: &MethodsConfig) -> Self {
        a12::A12Records
    }
}

impl FromMethodsConfig for shingles::MinHash {
    fn from_config(cfg: &MethodsConfig) -> Self {
        shingles::MinHash::new(&cfg.minhash)
    }
}

/// A method's records being made by one run of `signatures`, whatever the
/// method and its rows' type: rows built in memory and handed out as Arrow
/// batches, which the stage writes to the method's table.
pub trait RecordRows {
    /// Computes the records of `docs` (in parallel) and appends their rows
    /// in document order; each time a document leaves `batch_rows` rows or
    /// more pending, hands them to `write` as one batch, so that a chunk's
    /// rows are never all held at once. Returns the documents' signatures,
    /// if the records give them (one list per document), else nothing.
    fn append(
        &mut self,
        docs: &[DocView<'_>],
        batch_rows: usize,
        write: &mut dyn FnMut(RecordBatch) -> Result<()>,
    ) -> Result<Vec<Vec<Signature>>>;

    /// The rows still pending, as one batch (empty when none are).
    fn rest(&mut self) -> Result<RecordBatch>;
}

/// A [`RecordMethod`] and its pending rows.
struct Recording<M: RecordMethod> {
    method: M,
    rows: M::Rows,
}

impl<M: RecordMethod> RecordRows for Recording<M> {
    fn append(
        &mut self,
        docs: &[DocView<'_>],
        batch_rows: usize,
        write: &mut dyn FnMut(RecordBatch) -> Result<()>,
    ) -> Result<Vec<Vec<Signature>>> {
        let method = &self.method;
        let per_doc: Vec<M::Records> = docs.par_iter().map(|d| method.records(d)).collect();
        for (doc, records) in docs.iter().zip(&per_doc) {
            method.append(doc, records, &mut self.rows);
            if self.rows.len() >= batch_rows {
                write(self.rows.finish()?)?;
            }
        }
        Ok(if M::SIGNS { per_doc.iter().map(|r| method.signatures(r)).collect() } else { Vec::new() })
    }

    fn rest(&mut self) -> Result<RecordBatch> {
        self.rows.finish()
    }
}

fn build_records<M: RecordMethod + FromMethodsConfig>(cfg: &MethodsConfig) -> Box<dyn RecordRows> {
    Box::new(Recording { method: M::from_config(cfg), rows: M::Rows::default() })
}

/// Where a method's candidate edges come from. Every edge view gives
/// (method, doc_a, doc_b, strength, len_gap, score); `candidates.sql` keeps
/// each document's strongest.
pub enum Edges {
    /// Its groups of equal signatures (`exact_edges`, all signers at once).
    SharedSignatures,
    /// Its search's pairs (`method_pairs`, all searches at once).
    Search,
    /// SQL jobs of its own, run in this order; `edges` names the view
    /// giving its edges, `groups` the view giving its groups (or chains)
    /// over `max_group_size` records as (method, slot, sig, size), which
    /// `hot_signatures` reports. A method with signatures and its own SQL
    /// uses its signatures as an index only: its rows of `exact_edges` are
    /// not edges.
    Sql { jobs: &'static [SqlJob], edges: &'static str, groups: Option<&'static str> },
}

/// One SQL job of a method's own (`Edges::Sql`), by the name of its result
/// and the job it runs.
#[derive(Clone, Copy)]
pub enum SqlJob {
    /// Registered as a view: computed where it is read.
    View(&'static str, MethodJob),
    /// Written once as a table of the candidates stage (with a schema in
    /// `schemas/`) and read back: for results the later jobs read more
    /// than once, since DataFusion inlines a view at every use (a
    /// self-join of a view computes it twice).
    Table(Table, MethodJob),
}

/// A SQL job that belongs to one method, named as plain data: the registry
/// says which job a method needs, and the stage that runs it
/// (`stages::candidates::jobs`) holds the job's text, a file of `jobs/`,
/// so that each file is included by one module and the methods hold no SQL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodJob {
    /// A11's shingles with their document frequencies (`a11_shingles.sql`).
    A11Shingles,
    /// A11's chains of documents sharing a shingle (`a11_chains.sql`).
    A11Chains,
    /// A11's pairs linked along its chains (`a11_pairs.sql`).
    A11Pairs,
    /// A11's candidate edges (`a11.sql`).
    A11Edges,
    /// A11's chains over `max_group_size` (`a11_groups.sql`).
    A11Groups,
    /// A11's records as the history's group keys (`a11_keys.sql`).
    A11Keys,
    /// The night's rarest shingles of each page, matched against the
    /// history (`a11_rare_shingles.sql`).
    A11RareShingles,
    /// A12's candidate edges (`a12.sql`).
    A12Edges,
    /// A12's groups over `max_group_size` (`a12_groups.sql`).
    A12Groups,
    /// A12's records as the history's group keys (`a12_keys.sql`).
    A12Keys,
    /// MinHash's band pairs kept by their estimated resemblance
    /// (`minhash_edges.sql`).
    MinhashEdges,
}

impl SqlJob {
    /// The view's or table's name.
    pub fn name(&self) -> &'static str {
        match self {
            SqlJob::View(name, _) => name,
            SqlJob::Table(table, _) => table.name(),
        }
    }
}

/// Where a method whose state needs the documents takes it from.
#[derive(Clone, Copy)]
pub enum StateInput<'a> {
    /// Chosen now from these documents' counts (the `method_state` stage,
    /// from the sample of stage `descr_sample`).
    Corpus(&'a dyn descr::SamplePasses),
    /// The method's rows of `method_state`, saved by stage `method_state`, so that every
    /// task of a sharded `signatures` stage signs with the state chosen once
    /// from the whole corpus.
    Saved(&'a [StateRow]),
}

/// Where the signers of one build take their state from: the sampled
/// documents' counts, or every method's saved rows of `method_state` by
/// method id.
#[derive(Clone, Copy)]
pub enum StateSource<'a> {
    Corpus(&'a dyn descr::SamplePasses),
    Saved(&'a BTreeMap<String, Vec<StateRow>>),
}

/// A spec with only the common defaults: no parts, its signatures as edges.
const BASE: MethodSpec = MethodSpec {
    id: "",
    name: "",
    signer: None,
    reads: DocReads::TERMS,
    state_reads_documents: false,
    records: None,
    search: None,
    edges: Edges::SharedSignatures,
    includes_comparison: false,
    sql_params: |_| Vec::new(),
    history_keys: None,
};

/// Every method, in report order (the study's a0–a12, then the others).
pub static METHODS: &[MethodSpec] = &[
    MethodSpec { id: "a0", name: "MD5 of the whole text", signer: Some(|_, _, _| Box::new(whole::WholeMd5)), ..BASE },
    MethodSpec {
        id: "a1",
        name: "TF: the 6 most frequent terms",
        reads: DocReads::TERM_IDS,
        signer: Some(|c, s, _| Box::new(topwords::TopWords::new(topwords::Weighting::Tf, &c.top_words, s))),
        ..BASE
    },
    MethodSpec {
        id: "a2",
        name: "TF*IDF: the 6 heaviest terms by BM25",
        reads: DocReads::TERM_IDS,
        signer: Some(|c, s, _| Box::new(topwords::TopWords::new(topwords::Weighting::TfIdf, &c.top_words, s))),
        ..BASE
    },
    MethodSpec {
        id: "a3",
        name: "TF*RIDF: the 6 heaviest terms by residual IDF",
        reads: DocReads::TERM_IDS,
        signer: Some(|c, s, _| Box::new(topwords::TopWords::new(topwords::Weighting::TfRidf, &c.top_words, s))),
        ..BASE
    },
    MethodSpec {
        id: "a4",
        name: "LongSent: the 2 longest sentences",
        signer: Some(|c, _, _| Box::new(sentences::LongSent::new(&c.sentences))),
        ..BASE
    },
    MethodSpec {
        id: "a5",
        name: "HeavySent: the 2 heaviest sentences",
        reads: DocReads::TERM_IDS,
        signer: Some(|c, s, _| Box::new(sentences::HeavySent::new(&c.top_words, &c.sentences, s))),
        ..BASE
    },
    MethodSpec {
        id: "a6",
        name: "Megashingles: pairs of min-hash supershingles",
        signer: Some(|c, _, _| Box::new(shingles::Megashingles::new(&c.shingles, c.minhash.seed))),
        ..BASE
    },
    MethodSpec {
        id: "a7",
        name: "LexRand: I-Match with extra random lexicons",
        reads: DocReads::TERM_IDS,
        signer: Some(|c, s, _| Box::new(imatch::LexRand::new(&c.imatch, s))),
        ..BASE
    },
    MethodSpec {
        id: "a8",
        name: "LogShingles: about 8 sampled shingles",
        signer: Some(|c, _, _| Box::new(shingles::LogShingles::new(&c.shingles))),
        ..BASE
    },
    MethodSpec {
        id: "a9",
        name: "DescrWords: descriptive words",
        reads: DocReads::TERM_IDS,
        signer: Some(|c, s, state| {
            Box::new(match state {
                StateInput::Corpus(sample) => descr::DescrWords::choose(&c.descr, s, sample),
                StateInput::Saved(rows) => descr::DescrWords::from_state(&c.descr, s, rows),
            })
        }),
        state_reads_documents: true,
        ..BASE
    },
    MethodSpec {
        id: "a10",
        name: "OptFreq: the 6 terms of optimal frequency",
        reads: DocReads::TERM_IDS,
        signer: Some(|c, s, _| Box::new(topwords::TopWords::new(topwords::Weighting::OptFreq, &c.top_words, s))),
        ..BASE
    },
    MethodSpec {
        id: "a11",
        name: "Decomposition: chains of shared shingles",
        records: Some(Records::of::<a11::ShingleRecords>()),
        edges: Edges::Sql {
            jobs: &[
                SqlJob::View("a11_shingles", MethodJob::A11Shingles),
                SqlJob::Table(a11_chains::NAME, MethodJob::A11Chains),
                SqlJob::Table(a11_pairs::NAME, MethodJob::A11Pairs),
                SqlJob::View("a11_edges", MethodJob::A11Edges),
                SqlJob::View("a11_groups", MethodJob::A11Groups),
            ],
            edges: "a11_edges",
            groups: Some("a11_groups"),
        },
        // Each night page's rarest shingles against every shingle kept.
        history_keys: Some(HistoryKeys {
            sql: MethodJob::A11Keys,
            night: Some(MethodJob::A11RareShingles),
            kept: shingles_table::NAME,
        }),
        includes_comparison: true,
        sql_params: |c| {
            vec![
                ("ratio", format!("{:?}", c.chain_ratio)),
                ("a11_min_shared", format!("{:?}", c.a11.min_shared)),
                ("a11_prefix_share", format!("{:?}", c.a11.prefix_share)),
            ]
        },
        ..BASE
    },
    MethodSpec {
        id: "a12",
        name: "3+5: the 3 longest sentences and 5 longest words",
        reads: DocReads { words: true, term_ids: true },
        records: Some(Records::of::<a12::A12Records>()),
        edges: Edges::Sql {
            jobs: &[SqlJob::View("a12_edges", MethodJob::A12Edges), SqlJob::View("a12_groups", MethodJob::A12Groups)],
            edges: "a12_edges",
            groups: Some("a12_groups"),
        },
        history_keys: Some(HistoryKeys { sql: MethodJob::A12Keys, night: None, kept: a12_records::NAME }),
        sql_params: |c| {
            vec![("ratio", format!("{:?}", c.chain_ratio)), ("num_ratio", format!("{:?}", c.a12.num_ratio))]
        },
        ..BASE
    },
    MethodSpec {
        id: "imatch",
        name: "I-Match: the set of mid-frequency terms",
        reads: DocReads::TERM_IDS,
        signer: Some(|c, s, _| Box::new(imatch::IMatch::new(&c.imatch, s))),
        ..BASE
    },
    MethodSpec {
        id: "minhash",
        name: "MinHash: resemblance of min-hash sketches",
        records: Some(Records::of::<shingles::MinHash>()),
        edges: Edges::Sql {
            jobs: &[SqlJob::View("minhash_edges", MethodJob::MinhashEdges)],
            edges: "minhash_edges",
            groups: None,
        },
        sql_params: |c| {
            vec![
                ("minhash_functions", c.minhash.functions.to_string()),
                ("minhash_threshold", format!("{:?}", c.minhash.threshold)),
                ("sketch_columns", shingles::sketch_columns_sql(c.minhash.functions)),
                ("equal_positions", shingles::equal_positions_sql(c.minhash.functions)),
            ]
        },
        ..BASE
    },
    MethodSpec {
        id: "spotsigs",
        name: "SpotSigs: spot signatures after stop words",
        search: Some(|c| Box::new(spotsigs::SpotSigs::new(&c.spotsigs))),
        edges: Edges::Search,
        ..BASE
    },
    MethodSpec {
        id: "slst",
        name: "SL+ST: sentence lengths and suffix structure",
        search: Some(|c| Box::new(slst::Slst::new(&c.slst))),
        edges: Edges::Search,
        ..BASE
    },
];

/// The `${name}` parameters of the candidate SQL jobs: the bounds of
/// `[candidates]` and the settings every method's SQL reads
/// ([`MethodSpec::sql_params`]), for the `candidates` stage and the
/// history's `jobs/history_edges.sql`, which put the chain walk's text
/// (`jobs/chain_links.sql`, `${chain_links}`) before them. `probes` names
/// the relation the chain walk probes each chain with:
/// [`WALK_THROUGH_ITSELF`] for the candidate jobs, the night's pages for the
/// history's match.
pub fn sql_params(
    methods: &MethodsConfig,
    candidates: &CandidatesConfig,
    probes: &'static str,
) -> Vec<(&'static str, String)> {
    let index_only: Vec<String> = METHODS
        .iter()
        .filter(|m| m.writes_signatures() && matches!(m.edges, Edges::Sql { .. }))
        .map(|m| format!("'{}'", m.id))
        .collect();
    let mut params = vec![
        ("chain_probes", probes.to_string()),
        ("max_group_size", candidates.max_group_size.to_string()),
        ("max_edges", candidates.edge_bound().per_document().to_string()),
        // `NOT IN ('')` keeps every method when no signer is an index only.
        ("index_only_methods", if index_only.is_empty() { "''".into() } else { index_only.join(", ") }),
    ];
    for m in METHODS {
        for (name, value) in (m.sql_params)(methods) {
            if !params.iter().any(|(n, _)| *n == name) {
                params.push((name, value));
            }
        }
    }
    params
}

/// The probes of a chain walked through itself: its own members, the
/// relation `chain` of `jobs/chain_links.sql` (see [`sql_params`]).
pub const WALK_THROUGH_ITSELF: &str = "chain";

/// The method with id `id`.
pub fn spec(id: &str) -> Option<&'static MethodSpec> {
    METHODS.iter().find(|m| m.id == id)
}

/// The method as a user reads it: its id and name, "a0 (MD5 of the whole
/// text)"; an id the registry does not know (a table of an older run) as
/// it is.
pub fn title(id: &str) -> String {
    match spec(id) {
        Some(m) => format!("{} ({})", m.id, m.name),
        None => id.to_string(),
    }
}

/// Every method enabled, as `[methods]` is when a job file does not say.
impl Default for super::settings::Shared {
    fn default() -> Self {
        super::settings::Shared {
            enabled: ids().iter().map(|s| s.to_string()).collect(),
            chain_ratio: super::settings::DEFAULT_CHAIN_RATIO,
        }
    }
}

impl MethodsConfig {
    /// Every rule of `[methods]`: the ids `enabled` names are known here,
    /// the rest is the settings' ([`MethodsConfig::check_settings`]).
    pub fn check(&self, p: &mut Problems) {
        p.known_ids("methods", "enabled", &self.enabled, ids());
        self.check_settings(p);
    }
}

/// Every method id, in report order.
pub fn ids() -> &'static [&'static str] {
    static IDS: LazyLock<Vec<&'static str>> = LazyLock::new(|| METHODS.iter().map(|m| m.id).collect());
    &IDS
}

/// True when method `id` includes its comparison (see
/// [`MethodSpec::includes_comparison`]).
pub fn includes_comparison(id: &str) -> bool {
    spec(id).is_some_and(|m| m.includes_comparison)
}

/// The ids of the methods that include their comparison.
pub fn comparing_methods() -> impl Iterator<Item = &'static str> {
    METHODS.iter().filter(|m| m.includes_comparison).map(|m| m.id)
}

/// The specs of `ids` that are known, in the order of `ids`.
pub fn specs_of(ids: &[String]) -> impl Iterator<Item = &'static MethodSpec> + '_ {
    ids.iter().filter_map(|id| spec(id))
}

/// The searches by keys of the enabled methods ([`MethodSpec::search`]), in
/// registry order whatever the order of `enabled`: the order their rows
/// are written in.
pub fn searches(cfg: &MethodsConfig) -> Vec<Box<dyn super::PairMethod>> {
    METHODS.iter().filter(|m| cfg.is_enabled(m.id)).filter_map(|m| m.search.map(|build| build(cfg))).collect()
}

/// Builds the signers of the methods named in `ids`, in that order, from
/// the settings and the corpus statistics. The lexicons of imatch and a7
/// depend only on `stats` and the settings, so every task building them from
/// the same `df` gets the same ones. Ids without a signer are skipped, so the
/// caller can pass the whole method list.
pub fn build_signers(
    ids: &[String],
    cfg: &MethodsConfig,
    stats: &CorpusStats,
    state: StateSource<'_>,
) -> Vec<Box<dyn SignatureMethod>> {
    specs_of(ids)
        .filter_map(|m| {
            let build = m.signer?;
            let input = match state {
                StateSource::Corpus(sample) => StateInput::Corpus(sample),
                StateSource::Saved(saved) => StateInput::Saved(saved.get(m.id).map_or(&[], Vec::as_slice)),
            };
            Some(build(cfg, stats, input))
        })
        .collect()
}

/// What the signers and records writers of the methods named in `ids`
/// read of each document, together.
pub fn doc_reads(ids: &[String]) -> DocReads {
    specs_of(ids).filter(|m| m.signer.is_some() || m.records.is_some()).fold(DocReads::TERMS, |r, m| r.and(m.reads))
}

/// The lists of `tokens` that only some methods read: the `tokens` stage
/// writes each only when an enabled method reads it (else null), so that
/// a run of one method does not write, and every later stage does not
/// carry, the lists of others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ListsRead {
    /// `tokens.words`: a12's records, SpotSigs' search.
    pub words: bool,
    /// `tokens.sentence_lengths` and `sentence_heads`: SL+ST's search
    /// under the seed's rule.
    pub sentence_lengths: bool,
}

/// Which of the lists only some methods read ([`ListsRead`]) the methods
/// named in `ids` read: their signers, records and searches together.
pub fn lists_read(ids: &[String], cfg: &MethodsConfig) -> ListsRead {
    let mut read = ListsRead { words: doc_reads(ids).words, sentence_lengths: false };
    for build in specs_of(ids).filter_map(|m| m.search) {
        match build(cfg).reads() {
            TokenParts::Words | TokenParts::All => read.words = true,
            TokenParts::SentenceLengths => read.sentence_lengths = true,
            TokenParts::Terms => {}
        }
    }
    read
}

/// The tables the methods' own SQL writes in the candidates stage
/// ([`SqlJob::Table`]), in registry order.
pub fn sql_tables() -> impl Iterator<Item = Table> {
    METHODS
        .iter()
        .flat_map(|m| match &m.edges {
            Edges::Sql { jobs, .. } => jobs.iter(),
            _ => [].iter(),
        })
        .filter_map(|job| match job {
            SqlJob::Table(table, _) => Some(*table),
            SqlJob::View(..) => None,
        })
}

/// The tables of per-document records of every method, in registry order.
pub fn record_tables() -> impl Iterator<Item = Table> {
    METHODS.iter().filter_map(|m| m.records.as_ref().map(|r| r.table))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signers_are_built_in_the_given_order_and_other_ids_skipped() {
        let ids: Vec<String> = ["a10", "minhash", "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"]
            .iter()
            .chain(&["a9", "imatch", "slst", "a11", "spotsigs", "a12", "nonsense"])
            .map(|s| s.to_string())
            .collect();
        let methods =
            build_signers(&ids, &MethodsConfig::default(), &CorpusStats::default(), StateSource::Corpus(&Vec::new()));
        let built: Vec<&str> = methods.iter().map(|m| m.id()).collect();
        assert_eq!(built, ["a10", "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a9", "imatch"]);
    }

    /// Every signer signs the same with only what its [`DocReads`] names
    /// as with every list and the term ids: a method that read more than it
    /// declares would sign differently in a run of it alone.
    #[test]
    fn signers_read_no_more_than_they_declare() {
        // Sixty pages of made-up words drawn with skewed frequencies, so that
        // the weighted methods and a9 find words to sign with.
        let syllables = ["ka", "lo", "mi", "ru", "te", "sa", "no", "vi"];
        let word = |k: u64| format!("{}{}{}", syllables[(k % 8) as usize], syllables[(k / 8 % 8) as usize], "x");
        let mut seed = 7u64;
        let texts: Vec<String> = (0..60)
            .map(|_| {
                let sentence = |seed: &mut u64| {
                    let words: Vec<String> = (0..8)
                        .map(|_| {
                            // Half the words from six common ones, half from forty.
                            let r = crate::methods::splitmix64(seed);
                            word((r >> 8) % if r & 1 == 0 { 6 } else { 40 })
                        })
                        .collect();
                    format!("{}.", words.join(" "))
                };
                (0..4).map(|_| sentence(&mut seed)).collect::<Vec<_>>().join(" ")
            })
            .collect();
        let normalizer = crate::text::Normalizer::new(&crate::text::settings::TextConfig::default());
        let tokenized: Vec<crate::text::Tokenized> = texts.iter().map(|t| normalizer.tokenize(t, "en")).collect();
        let full: Vec<DocView> = tokenized
            .iter()
            .enumerate()
            .map(|(i, t)| DocView {
                doc_id: i as u64,
                terms: crate::methods::leaked(&t.terms),
                sentence_ends: &t.sentence_ends,
                words: crate::methods::leaked(&t.words),
                ..DocView::default()
            })
            .collect();
        let mut counts: BTreeMap<String, crate::methods::TermStats> = BTreeMap::new();
        for t in &tokenized {
            let terms: Vec<&str> = t.terms.iter().map(String::as_str).collect();
            for (term, n) in crate::methods::term_frequencies(&terms) {
                let stats = counts.entry(term.to_string()).or_default();
                (stats.df, stats.cf) = (stats.df + 1, stats.cf + u64::from(n));
            }
        }
        let total: usize = tokenized.iter().map(|t| t.terms.len()).sum();
        let mut stats = CorpusStats { n_docs: 60, dl_avg: total as f64 / 60.0, ..CorpusStats::default() };
        stats.terms = counts.into_iter().collect();
        let full = crate::methods::term_ids::with_ids(&full, &stats.terms);
        // A state chosen from documents (a9's words) is given: every term,
        // each above a threshold of 0.
        let every_term: Vec<StateRow> =
            stats.terms.iter().map(|(_, t, _)| StateRow { slot: 0, term: t.to_string(), value: 0.0 }).collect();
        let config = MethodsConfig::default();
        for m in METHODS {
            let Some(build) = m.signer else { continue };
            let state = match m.state_reads_documents {
                true => StateInput::Saved(&every_term),
                false => StateInput::Corpus(&Vec::new()),
            };
            let signer = build(&config, &stats, state);
            let mut signed_any = false;
            for doc in &full {
                let mut declared = *doc;
                if !m.reads.words {
                    declared.words = &[];
                }
                if !m.reads.term_ids {
                    (declared.term_ids, declared.term_counts) = (&[], &[]);
                }
                let (mut with_all, mut with_declared) = (Vec::new(), Vec::new());
                signer.sign(doc, &mut with_all);
                signer.sign(&declared, &mut with_declared);
                assert_eq!(with_all, with_declared, "{} reads more than it declares", m.id);
                signed_any |= !with_all.is_empty();
            }
            assert!(signed_any, "{} signed none of the test documents", m.id);
        }
        // A run of signers reads what any of them reads.
        let ids = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(doc_reads(&ids(&["minhash", "a11", "a0"])), DocReads::TERMS);
        assert_eq!(doc_reads(&ids(&["minhash", "a1"])), DocReads::TERM_IDS);
        assert_eq!(doc_reads(&ids(&["spotsigs", "a12"])), DocReads { words: true, term_ids: true });
        // The lists of tokens only some methods read: a12 and SpotSigs read
        // the words, SL+ST (the seed's rule, the default) the sentence lengths.
        let cfg = MethodsConfig::default();
        let lists = |list: &[&str]| lists_read(&ids(list), &cfg);
        assert_eq!(lists(&["minhash", "a1", "a11"]), ListsRead { words: false, sentence_lengths: false });
        assert_eq!(lists(&["a12"]), ListsRead { words: true, sentence_lengths: false });
        assert_eq!(lists(&["spotsigs"]), ListsRead { words: true, sentence_lengths: false });
        assert_eq!(lists(&["slst"]), ListsRead { words: false, sentence_lengths: true });
    }

    #[test]
    fn every_spec_is_consistent() {
        let config = MethodsConfig::default();
        let mut seen = std::collections::HashSet::new();
        for m in METHODS {
            assert!(seen.insert(m.id), "{} is listed twice", m.id);
            // Every method has a name a user can read, not its id again.
            assert!(!m.name.is_empty() && m.name != m.id, "{} has no name", m.id);
            // A signer reports the id it is listed under.
            if let Some(build) = m.signer {
                assert_eq!(build(&config, &CorpusStats::default(), StateInput::Corpus(&Vec::new())).id(), m.id);
            }
            if let Some(build) = m.search {
                assert_eq!(build(&config).id(), m.id);
            }
            // Each method's edges come from a part it has.
            match &m.edges {
                Edges::SharedSignatures => assert!(m.signer.is_some(), "{} has no signatures", m.id),
                Edges::Search => assert!(m.search.is_some(), "{} has no search", m.id),
                Edges::Sql { jobs, edges, groups } => {
                    assert!(m.signer.is_some() || m.records.is_some(), "{} has nothing its SQL reads", m.id);
                    let names: Vec<&str> = jobs.iter().map(SqlJob::name).collect();
                    assert!(names.contains(edges), "{}: edge view {edges} is not among its views", m.id);
                    assert!(groups.is_none_or(|g| names.contains(&g)), "{}: group view is not among its views", m.id);
                }
            }
            // History keys read the method's own table.
            if let Some(keys) = &m.history_keys {
                let table = m.records.as_ref().map(|r| r.table);
                assert_eq!(table, Some(keys.kept), "{}: the history keeps its records table", m.id);
            }
        }
        assert_eq!(ids().iter().map(|s| s.to_string()).collect::<Vec<_>>(), config.enabled);
        assert_eq!(comparing_methods().collect::<Vec<_>>(), ["a11"]);
    }

    /// A method's records leave the method as batches of its table's
    /// schema, in document order: one each time a document leaves
    /// `batch_rows` rows pending, the rest at the end. The method opens no
    /// table (the `signatures` stage writes the batches), and minhash's
    /// records give its signatures, the bands of each document's sketch.
    #[test]
    fn records_are_rows_in_document_order_handed_out_in_batches() {
        let cfg = MethodsConfig::default();
        let texts = [
            "harbor lantern meadow orchard pebble quartz ribbon saddle timber velvet walnut zephyr",
            "anchor bramble cobalt dune ember fjord glacier hollow inlet juniper kelp lagoon",
            "",
            "marble nectar obsidian prairie quiver russet sorrel tundra umber willow yarrow zinnia",
        ];
        let normalizer = crate::text::Normalizer::new(&crate::text::settings::TextConfig::default());
        let tokenized: Vec<crate::text::Tokenized> = texts.iter().map(|t| normalizer.tokenize(t, "en")).collect();
        let docs: Vec<DocView> = tokenized
            .iter()
            .enumerate()
            .map(|(i, t)| DocView {
                doc_id: 10 + i as u64,
                terms: crate::methods::leaked(&t.terms),
                sentence_ends: &t.sentence_ends,
                ..DocView::default()
            })
            .collect();

        let width = cfg.shingles.shingle_width;
        let a11 = spec("a11").and_then(|m| m.records.as_ref()).unwrap();
        assert_eq!(a11.table, crate::tables::columns::shingles::NAME);
        let mut rows = (a11.build)(&cfg);
        let mut batches = Vec::new();
        let signatures = rows
            .append(&docs, 4, &mut |b| {
                batches.push(b);
                Ok(())
            })
            .unwrap();
        assert!(signatures.is_empty(), "a11's records give no signatures");
        let handed_out = batches.len();
        batches.push(rows.rest().unwrap());
        assert!(handed_out >= 2, "{handed_out} batches before the rest");
        assert!(batches[..handed_out].iter().all(|b| b.num_rows() >= 4));
        let shingles_schema = crate::tables::schema::arrow_schema("shingles");
        assert!(batches.iter().all(|b| b.schema() == shingles_schema));
        let doc_ids: Vec<u64> = batches
            .iter()
            .flat_map(|b| crate::tables::columns::shingles::doc_id(b).unwrap().values().to_vec())
            .collect();
        let expected: Vec<u64> = docs
            .iter()
            .flat_map(|d| std::iter::repeat_n(d.doc_id, shingles::distinct_shingles(d.terms, width).len()))
            .collect();
        assert_eq!(doc_ids, expected);

        let minhash = spec("minhash").and_then(|m| m.records.as_ref()).unwrap();
        let mut rows = (minhash.build)(&cfg);
        let signatures = rows.append(&docs, usize::MAX, &mut |_| panic!("no batch is full")).unwrap();
        let method = shingles::MinHash::new(&cfg.minhash);
        let bands: Vec<Vec<Signature>> =
            docs.iter().map(|d| method.sketch(d.terms).map(|s| method.bands(&s)).unwrap_or_default()).collect();
        assert_eq!(signatures, bands);
        assert!(signatures[2].is_empty() && !signatures[0].is_empty());
        let sketched = docs.iter().filter(|d| method.sketch(d.terms).is_some()).count();
        assert_eq!(sketched, 3, "every document with terms has a sketch");
        assert_eq!(rows.rest().unwrap().num_rows(), sketched * cfg.minhash.functions);
    }

    #[test]
    fn a_title_is_the_id_with_its_name() {
        assert_eq!(title("a0"), "a0 (MD5 of the whole text)");
        assert_eq!(title("no-such-method"), "no-such-method");
    }
}
