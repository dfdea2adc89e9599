//! I-Match (Chowdhury et al. 2002) and its multi-lexicon form a7 LexRand
//! (Kołcz et al.), spec §2. A global lexicon keeps the terms of middle
//! rarity; a document's signature is the SHA1 of its distinct lexicon terms,
//! sorted and joined by single spaces, so word order and repetitions do not
//! matter. LexRand adds K lexicons, each a random reduction of the main one,
//! so a change confined to words some reduced lexicon lacks leaves that
//! lexicon's signature intact.

use super::StateRow;
use super::{digest_prefix_u64, splitmix64, CorpusStats, DocView, Signature, SignatureMethod};
use crate::methods::traits::FamilySettings;
use crate::settings::Problems;
use serde::{Deserialize, Serialize};
use sha1::{Digest, Sha1};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The I-Match lexicon: every term whose normalized IDF `ln(N/df)/ln(N)`
/// lies in `[imatch_idf_low, imatch_idf_high]`, with that value, by term id
/// (`None` outside the lexicon). Empty when N <= 1 (ln N = 0, no term can
/// be told rare or frequent).
fn build_lexicon(cfg: &IMatchSettings, stats: &CorpusStats) -> Vec<Option<f64>> {
    if stats.n_docs <= 1 {
        return vec![None; stats.terms.len()];
    }
    let ln_n = (stats.n_docs as f64).ln();
    stats.terms.map(|_, st| {
        let nidf = (stats.n_docs as f64 / st.df as f64).ln() / ln_n;
        (st.df > 0 && nidf >= cfg.idf_low && nidf <= cfg.idf_high).then_some(nidf)
    })
}

/// SHA1 of the (already sorted) features joined by single spaces, as a `sig`.
fn sha1_sig(features: &[&str]) -> u64 {
    let mut h = Sha1::new();
    for (i, f) in features.iter().enumerate() {
        if i > 0 {
            h.update(b" ");
        }
        h.update(f.as_bytes());
    }
    digest_prefix_u64(&h.finalize())
}

/// imatch: one SHA1 signature (slot 0) of the document's distinct lexicon
/// terms, if there are at least `imatch_min_features` of them (short
/// documents would otherwise collide on a handful of common words).
#[derive(Debug, Clone)]
pub struct IMatch {
    /// Normalized IDF of each lexicon term, by term id.
    lexicon: Vec<Option<f64>>,
    /// The lexicon's terms with their normalized IDF, by term: its state.
    rows: Vec<StateRow>,
    min_features: usize,
}

impl IMatch {
    /// Builds the lexicon from `stats` with the band and minimum of `cfg`.
    pub fn new(cfg: &IMatchSettings, stats: &CorpusStats) -> Self {
        let lexicon = build_lexicon(cfg, stats);
        let rows = stats
            .terms
            .iter()
            .filter_map(|(id, t, _)| lexicon[id as usize].map(|value| StateRow { slot: 0, term: t.to_string(), value }))
            .collect();
        IMatch { lexicon, rows, min_features: cfg.min_features }
    }

    /// The document's feature set: its distinct lexicon terms, sorted.
    /// Every lexicon term is in the dictionary, so id order is byte order.
    fn features<'a>(&self, doc: &DocView<'a>) -> Vec<(u32, &'a str)> {
        doc.term_counts.iter().filter(|c| self.in_lexicon(c.id)).map(|c| (c.id, doc.term_of(c))).collect()
    }

    /// Whether the term with id `id` is in the lexicon.
    fn in_lexicon(&self, id: u32) -> bool {
        self.lexicon.get(id as usize).is_some_and(Option::is_some)
    }

    /// The lexicon as state rows (slot 0, value = normalized IDF), by term.
    fn lexicon_rows(&self) -> Vec<StateRow> {
        self.rows.clone()
    }
}

impl SignatureMethod for IMatch {
    fn id(&self) -> &'static str {
        "imatch"
    }

    fn sign(&self, doc: &DocView<'_>, out: &mut Vec<Signature>) {
        let f: Vec<&str> = self.features(doc).into_iter().map(|(_, t)| t).collect();
        if f.len() >= self.min_features {
            out.push(Signature { slot: 0, sig: sha1_sig(&f) });
        }
    }

    /// The lexicon with each term's normalized IDF.
    fn state(&self) -> Vec<StateRow> {
        self.lexicon_rows()
    }
}

/// a7 LexRand: the I-Match signature of the main lexicon in slot 0 plus one
/// per extra lexicon in slots 1..=K. Extra lexicon i drops each main-lexicon
/// term independently with probability p, decided by a hash of the term
/// seeded from `(lexrand_seed, i)`: the lexicons depend only on the seed and
/// the term, not on map order, and are identical across runs. Dropping
/// independently per term is what makes the study's survival probability
/// `1-(1-p^n)^K` exact. `imatch_min_features` applies to each lexicon.
#[derive(Debug, Clone)]
pub struct LexRand {
    main: IMatch,
    /// Per extra lexicon, whether it keeps each main-lexicon term, by term id.
    extra: Vec<Vec<bool>>,
}

impl LexRand {
    /// The main lexicon as for imatch and K = `lexrand_extra_lexicons` extra
    /// lexicons dropping `lexrand_drop_fraction` of it, seeded by `lexrand_seed`.
    pub fn new(cfg: &IMatchSettings, stats: &CorpusStats) -> Self {
        let main = IMatch::new(cfg, stats);
        let mut state = cfg.seed;
        let extra = (0..cfg.extra_lexicons)
            .map(|_| {
                // Hash seed of extra lexicon i+1: the i-th value of splitmix64 from `lexrand_seed`.
                let seed = splitmix64(&mut state);
                stats.terms.iter().map(|(id, t, _)| main.in_lexicon(id) && keeps(seed, t, cfg.drop_fraction)).collect()
            })
            .collect();
        LexRand { main, extra }
    }
}

/// Whether the extra lexicon with hash seed `seed` keeps `term`: a uniform
/// number in [0, 1) from the term's hash, dropped below `drop_fraction`.
fn keeps(seed: u64, term: &str, drop_fraction: f64) -> bool {
    let u = (xxh3_64_with_seed(term.as_bytes(), seed) >> 11) as f64 / (1u64 << 53) as f64;
    u >= drop_fraction
}

impl SignatureMethod for LexRand {
    fn id(&self) -> &'static str {
        "a7"
    }

    fn sign(&self, doc: &DocView<'_>, out: &mut Vec<Signature>) {
        let features = self.main.features(doc);
        let min = self.main.min_features;
        if features.len() >= min {
            out.push(Signature { slot: 0, sig: sha1_sig(&features.iter().map(|f| f.1).collect::<Vec<_>>()) });
        }
        for (i, kept_by) in self.extra.iter().enumerate() {
            let kept: Vec<&str> = features.iter().filter(|f| kept_by[f.0 as usize]).map(|f| f.1).collect();
            if kept.len() >= min {
                out.push(Signature { slot: i as u16 + 1, sig: sha1_sig(&kept) });
            }
        }
    }

    /// The main lexicon only (slot 0, normalized IDF): the extra lexicons
    /// follow from it and the configured seed and drop fraction.
    fn state(&self) -> Vec<StateRow> {
        self.main.lexicon_rows()
    }
}

/// The settings of imatch and of a7, its multi-lexicon form, in
/// `[methods]` (`imatch_*`, `lexrand_*`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IMatchSettings {
    /// Lower bound of the normalized IDF band ln(N/df)/ln(N).
    #[serde(rename = "imatch_idf_low")]
    pub idf_low: f64,
    /// Upper bound of the normalized IDF band.
    #[serde(rename = "imatch_idf_high")]
    pub idf_high: f64,
    /// Documents with fewer lexicon terms get no signature.
    #[serde(rename = "imatch_min_features")]
    pub min_features: usize,
    /// a7: number of extra lexicons K.
    #[serde(rename = "lexrand_extra_lexicons")]
    pub extra_lexicons: usize,
    /// a7: fraction p of the main lexicon removed in each extra lexicon.
    #[serde(rename = "lexrand_drop_fraction")]
    pub drop_fraction: f64,
    /// a7: seed of the random lexicon reductions.
    #[serde(rename = "lexrand_seed")]
    pub seed: u64,
}

impl Default for IMatchSettings {
    fn default() -> Self {
        IMatchSettings {
            idf_low: 0.2,
            idf_high: 0.85,
            min_features: 5,
            extra_lexicons: 10,
            drop_fraction: 0.33,
            seed: 42,
        }
    }
}

impl FamilySettings for IMatchSettings {
    fn check(&self, p: &mut Problems) {
        const S: &str = "methods";
        p.within(S, "imatch_idf_low", self.idf_low, 0.0, 1.0);
        p.within(S, "imatch_idf_high", self.idf_high, 0.0, 1.0);
        p.require(self.idf_low < self.idf_high || self.idf_low.is_nan(), || {
            format!(
                "[methods] imatch_idf_low = {} must be below imatch_idf_high = {} (the lexicon is the band between)",
                self.idf_low, self.idf_high
            )
        });
        p.at_least(S, "imatch_min_features", self.min_features, 1);
        // Slot K of a7 holds the last extra lexicon; slots are 16-bit.
        p.require(self.extra_lexicons <= usize::from(u16::MAX), || {
            format!("[methods] lexrand_extra_lexicons = {} must be at most {}", self.extra_lexicons, u16::MAX)
        });
        p.within(S, "lexrand_drop_fraction", self.drop_fraction, 0.0, 1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::TermStats;

    fn stats(n_docs: u64, rows: &[(String, u64)]) -> CorpusStats {
        CorpusStats {
            n_docs,
            dl_avg: 10.0,
            terms: rows.iter().map(|(t, df)| (t.clone(), TermStats { df: *df, cf: *df })).collect(),
        }
    }

    /// N = 100 and 30 terms w00..w29 with df = 10: normalized IDF
    /// ln(10)/ln(100) = 0.5, all in the lexicon; plus "rare" (df 1) and "common" (df 60).
    fn stats30() -> CorpusStats {
        let mut rows: Vec<(String, u64)> = (0..30).map(|i| (format!("w{i:02}"), 10)).collect();
        rows.push(("rare".into(), 1));
        rows.push(("common".into(), 60));
        stats(100, &rows)
    }

    fn sign(m: &dyn SignatureMethod, terms: &[String]) -> Vec<Signature> {
        let terms: Vec<&str> = terms.iter().map(String::as_str).collect();
        let ends = [terms.len() as u32];
        let doc = DocView { doc_id: 1, terms: &terms, sentence_ends: &ends, words: &terms, ..Default::default() };
        let mut out = Vec::new();
        // Every test's method is built from `stats30` but one, whose
        // lexicon is empty whatever the ids.
        m.sign(&crate::methods::term_ids::with_ids(&[doc], &stats30().terms)[0], &mut out);
        out
    }

    fn words(ids: impl IntoIterator<Item = usize>) -> Vec<String> {
        ids.into_iter().map(|i| format!("w{i:02}")).collect()
    }

    #[test]
    fn lexicon_band_edges() {
        // N = 100, ln N = 4.60517. ln(100/df)/ln(100):
        //   df 1: 1.0 (out), df 2: 3.91202/4.60517 = 0.84949 (in),
        //   df 39: 0.94161/4.60517 = 0.20447 (in), df 40: 0.91629/4.60517 = 0.19897 (out).
        let s = stats(100, &[("a".into(), 1), ("b".into(), 2), ("c".into(), 39), ("d".into(), 40)]);
        let rows = IMatch::new(&IMatchSettings::default(), &s).state();
        let terms: Vec<&str> = rows.iter().map(|r| r.term.as_str()).collect();
        assert_eq!(terms, ["b", "c"]);
        assert!((rows[0].value - 0.849485).abs() < 1e-6);
        assert!((rows[1].value - 0.204468).abs() < 1e-6);
    }

    #[test]
    fn imatch_sorted_unique_lexicon_terms_and_min_features() {
        let m = IMatch::new(&IMatchSettings::default(), &stats30());
        let doc: Vec<String> = ["w04", "rare", "w01", "w03", "common", "w01", "w02"].map(String::from).to_vec();
        // Four distinct lexicon terms: fewer than 5, no signature.
        assert!(sign(&m, &doc).is_empty());
        let mut doc5 = doc.clone();
        doc5.push("w00".into());
        let expected = digest_prefix_u64(&Sha1::digest(b"w00 w01 w02 w03 w04"));
        assert_eq!(sign(&m, &doc5), vec![Signature { slot: 0, sig: expected }]);
        // Word order and repetition do not matter.
        let shuffled: Vec<String> = ["w02", "w00", "w04", "w03", "w01", "rare"].map(String::from).to_vec();
        assert_eq!(sign(&m, &shuffled), sign(&m, &doc5));
    }

    #[test]
    fn single_document_corpus_has_empty_lexicon() {
        let s = stats(1, &[("w00".into(), 1)]);
        let cfg = IMatchSettings { min_features: 0, ..IMatchSettings::default() };
        assert!(IMatch::new(&cfg, &s).state().is_empty());
        assert!(LexRand::new(&IMatchSettings::default(), &s).state().is_empty());
        assert!(sign(&LexRand::new(&IMatchSettings::default(), &s), &words(0..1)).is_empty());
    }

    #[test]
    fn lexrand_order_free_and_survives_an_added_word() {
        let m = LexRand::new(&IMatchSettings::default(), &stats30());
        let doc = words(0..20);
        let sigs = sign(&m, &doc);
        assert_eq!(sigs.len(), 11);
        assert_eq!(sigs.iter().map(|s| s.slot).collect::<Vec<_>>(), (0..=10).collect::<Vec<_>>());
        assert_eq!(sigs, sign(&m, &words((0..20).rev())));
        // Slot 0 is plain I-Match.
        assert_eq!(sigs[0], sign(&IMatch::new(&IMatchSettings::default(), &stats30()), &doc)[0]);

        let mut changed = doc.clone();
        changed.push("w25".into());
        let changed_sigs = sign(&m, &changed);
        assert_ne!(changed_sigs[0], sigs[0]);
        let intact = sigs[1..].iter().filter(|s| changed_sigs.contains(s)).count();
        assert!(intact >= 1, "seed 42: some extra lexicon lacks w25");
        assert!(intact < 10, "some extra lexicon keeps w25");
    }

    #[test]
    fn lexrand_same_seed_same_lexicons() {
        let a = LexRand::new(&IMatchSettings::default(), &stats30());
        // A separately built map iterates in another order: lexicons must not care.
        let b = LexRand::new(&IMatchSettings::default(), &stats30());
        let other = IMatchSettings { seed: 7, ..IMatchSettings::default() };
        let c = LexRand::new(&other, &stats30());
        let doc = words(0..30);
        assert_eq!(sign(&a, &doc), sign(&b, &doc));
        assert_ne!(sign(&a, &doc)[1..], sign(&c, &doc)[1..]);
    }

    #[test]
    fn lexrand_survival_probability_matches_formula() {
        // Remove n random words from a 30-word document and count the trials
        // where at least one of the K extra signatures is unchanged; each
        // trial uses a new seed, so the lexicons are new random draws.
        // Expected 1-(1-p^n)^K with p = 0.33, K = 10:
        //   n=1: 1-0.67^10 = 0.98177; n=2: 1-0.8911^10 = 0.68429; n=3: 1-0.964063^10 = 0.30649.
        let trials = 3000;
        let doc = words(0..30);
        for (n, expected) in [(1usize, 0.98177), (2, 0.68429), (3, 0.30649)] {
            let mut rng = 1000 + n as u64;
            let mut survived = 0;
            for t in 0..trials {
                let cfg = IMatchSettings { seed: t, ..IMatchSettings::default() };
                let m = LexRand::new(&cfg, &stats30());
                let before = sign(&m, &doc);
                let mut changed = doc.clone();
                for _ in 0..n {
                    let i = (splitmix64(&mut rng) % changed.len() as u64) as usize;
                    changed.remove(i);
                }
                let after = sign(&m, &changed);
                if before[1..].iter().any(|s| after.contains(s)) {
                    survived += 1;
                }
            }
            let share = survived as f64 / trials as f64;
            // Standard error at most sqrt(0.25/3000) = 0.0091: allow about 3.5 of them.
            assert!((share - expected).abs() < 0.032, "n={n}: {share} vs {expected}");
        }
    }
}
