//! Top-words signatures (spec §1): a1 TF, a2 TF*IDF, a3 TF*RIDF, a10
//! OptFreq. Each weighs the distinct terms of a document, keeps the
//! `top_words` heaviest (ties: term ascending), joins them in alphabetical
//! order with single spaces and takes the CRC32 of the UTF-8 bytes. The four
//! methods differ only in the weight, so one type serves them all.

use super::{CorpusStats, DocView, Signature, SignatureMethod, TermCount, TermStats};
use crate::methods::traits::FamilySettings;
use crate::settings::Problems;
use serde::{Deserialize, Serialize};

/// "Optimal" IDF of a10: `-ln(10/1_000_000)`, a word found in 10 documents
/// out of a million (Maslov, as cited by the study).
const OPT_IDF: f64 = 11.5;

/// How a top-words method weighs a term of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weighting {
    /// a1: the raw term frequency `tf` (a "local" method, no corpus statistics).
    Tf,
    /// a2: Okapi BM25, `tf / (k*((1-b) + b*dl/dl_avg) + tf) * ln((N-df+0.5)/(df+0.5))`.
    TfIdf,
    /// a3: `(0.5 + 0.5*tf/tf_max) * (-ln(df/N) + ln(1 - exp(-cf/N)))`.
    TfRidf,
    /// a10: `(0.5 + 0.5*tf/tf_max) * IDF_opt`, `IDF = -ln(df/N)`,
    /// `IDF_opt = sqrt(IDF/11.5)` below 11.5, else `11.5/IDF`.
    OptFreq,
}

impl Weighting {
    /// The method id of the top-words method using this weighting.
    pub fn id(self) -> &'static str {
        match self {
            Weighting::Tf => "a1",
            Weighting::TfIdf => "a2",
            Weighting::TfRidf => "a3",
            Weighting::OptFreq => "a10",
        }
    }

    /// The corpus-wide factor of a term's weight (IDF, RIDF, IDF_opt; 1 for
    /// a1), `n` being the number of documents N (at least 1).
    fn global_factor(self, n: f64, st: TermStats) -> f64 {
        let df = st.df as f64;
        match self {
            Weighting::Tf => 1.0,
            Weighting::TfIdf => ((n - df + 0.5) / (df + 0.5)).ln(),
            Weighting::TfRidf => -(df / n).ln() + (1.0 - (-(st.cf as f64) / n).exp()).ln(),
            Weighting::OptFreq => {
                let idf = -(df / n).ln();
                if idf < OPT_IDF {
                    (idf / OPT_IDF).sqrt()
                } else {
                    OPT_IDF / idf
                }
            }
        }
    }
}

/// Computes the weights of a document's distinct terms for one
/// [`Weighting`]. The corpus-wide factor of every known term is computed once
/// at construction, in an array by term id; a5 reuses the a2 weigher for its
/// sentence weights.
#[derive(Debug, Clone)]
pub struct TermWeigher {
    weighting: Weighting,
    /// N, at least 1 so logarithms stay finite.
    n_docs: f64,
    dl_avg: f64,
    bm25_k: f64,
    bm25_b: f64,
    /// Number of terms of the corpus's dictionary (ids below it are known).
    dict_len: usize,
    /// Corpus-wide factor per term id (empty for a1, which needs none).
    global: Vec<f64>,
}

impl TermWeigher {
    /// Precomputes the corpus-wide factor of every term of `stats`.
    pub fn new(weighting: Weighting, cfg: &TopWordsSettings, stats: &CorpusStats) -> Self {
        let n_docs = stats.n_docs.max(1) as f64;
        let global = match weighting {
            Weighting::Tf => Vec::new(),
            _ => stats.terms.map(|_, st| weighting.global_factor(n_docs, st)),
        };
        TermWeigher {
            weighting,
            n_docs,
            dl_avg: stats.dl_avg,
            bm25_k: cfg.bm25_k,
            bm25_b: cfg.bm25_b,
            dict_len: stats.terms.len(),
            global,
        }
    }

    /// The weight of each distinct term of `doc`, in the order of its
    /// [`DocView::term_counts`]. A term missing from the corpus statistics
    /// is weighted as if `df = 1` and `cf = tf` (it can only happen if the
    /// statistics and the document come from different runs).
    pub fn weights(&self, doc: &DocView<'_>) -> Vec<f64> {
        let tf_max = doc.term_counts.iter().map(|c| c.tf).max().unwrap_or(1) as f64;
        let dl = doc.terms.len() as f64;
        // dl/dl_avg; an empty corpus average cannot normalize anything.
        let rel_len = if self.dl_avg > 0.0 { dl / self.dl_avg } else { 1.0 };
        let bm25_norm = self.bm25_k * ((1.0 - self.bm25_b) + self.bm25_b * rel_len);
        doc.term_counts
            .iter()
            .map(|c| {
                let f = c.tf as f64;
                let global = || match self.global.get(c.id as usize) {
                    Some(&g) => g,
                    None => self.weighting.global_factor(self.n_docs, TermStats { df: 1, cf: c.tf as u64 }),
                };
                match self.weighting {
                    Weighting::Tf => f,
                    Weighting::TfIdf => f / (bm25_norm + f) * global(),
                    Weighting::TfRidf | Weighting::OptFreq => (0.5 + 0.5 * f / tf_max) * global(),
                }
            })
            .collect()
    }

    /// The size of the dictionary the weights were built from, for
    /// [`DocView::term_order`].
    pub fn dict_len(&self) -> usize {
        self.dict_len
    }
}

/// CRC32 of `parts` sorted alphabetically and joined by single spaces, as a
/// `sig`: the final step shared by the top-words and sentence methods.
pub fn crc32_of_sorted_join(mut parts: Vec<&str>) -> u64 {
    parts.sort_unstable();
    let mut h = crc32fast::Hasher::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.update(b" ");
        }
        h.update(p.as_bytes());
    }
    h.finalize() as u64
}

/// The first `top` of `items` in the order `cmp`, in that order: a
/// selection, then a sort of the `top` kept, so the cost stays linear in
/// the number of items. `cmp` must be a total order for the choice to be
/// deterministic (every caller breaks ties by a string).
pub fn top_by<T>(mut items: Vec<T>, top: usize, cmp: impl Fn(&T, &T) -> std::cmp::Ordering) -> Vec<T> {
    if top == 0 {
        return Vec::new();
    }
    if items.len() > top {
        items.select_nth_unstable_by(top - 1, &cmp);
        items.truncate(top);
    }
    items.sort_unstable_by(&cmp);
    items
}

/// a1, a2, a3, a10: CRC32 of the `top_words` heaviest terms joined in
/// alphabetical order, slot 0. A document with fewer distinct terms uses
/// what it has; one without terms gets no signature.
#[derive(Debug, Clone)]
pub struct TopWords {
    weigher: TermWeigher,
    top_words: usize,
}

impl TopWords {
    /// The top-words method with the given weighting (its id follows from it).
    pub fn new(weighting: Weighting, cfg: &TopWordsSettings, stats: &CorpusStats) -> Self {
        TopWords { weigher: TermWeigher::new(weighting, cfg, stats), top_words: cfg.top_words }
    }
}

impl SignatureMethod for TopWords {
    fn id(&self) -> &'static str {
        self.weigher.weighting.id()
    }

    fn sign(&self, doc: &DocView<'_>, out: &mut Vec<Signature>) {
        if doc.terms.is_empty() {
            return;
        }
        let weighted: Vec<(&TermCount, f64)> = doc.term_counts.iter().zip(self.weigher.weights(doc)).collect();
        let dict_len = self.weigher.dict_len();
        let top = top_by(weighted, self.top_words, |a, b| {
            b.1.total_cmp(&a.1).then_with(|| doc.term_order(a.0, b.0, dict_len))
        });
        out.push(Signature { slot: 0, sig: crc32_of_sorted_join(top.iter().map(|(c, _)| doc.term_of(c)).collect()) });
    }
}

/// The settings of a1, a2, a3 and a10 in `[methods]` (spec §1), and the
/// BM25 constants a5's sentence weights share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TopWordsSettings {
    /// How many top-weighted terms make the signature.
    pub top_words: usize,
    /// a2, a5: Okapi BM25 k.
    pub bm25_k: f64,
    /// a2, a5: Okapi BM25 b.
    pub bm25_b: f64,
}

impl Default for TopWordsSettings {
    fn default() -> Self {
        TopWordsSettings { top_words: 6, bm25_k: 2.0, bm25_b: 0.75 }
    }
}

impl FamilySettings for TopWordsSettings {
    fn check(&self, p: &mut Problems) {
        p.at_least("methods", "top_words", self.top_words, 1);
        p.require(self.bm25_k.is_finite() && self.bm25_k >= 0.0, || {
            format!("[methods] bm25_k = {} must be a number of at least 0", self.bm25_k)
        });
        p.within("methods", "bm25_b", self.bm25_b, 0.0, 1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document every test signs: 11 terms, zulu x3, mike x2, six terms x1.
    const DOC: &str = "zulu mike papa zulu oscar delta mike golf zulu echo kilo";

    fn terms(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    fn stats(n_docs: u64, dl_avg: f64, rows: &[(&str, u64, u64)]) -> CorpusStats {
        CorpusStats {
            n_docs,
            dl_avg,
            terms: rows.iter().map(|&(t, df, cf)| (t.to_string(), TermStats { df, cf })).collect(),
        }
    }

    /// (term, df, cf) of [`stats100`].
    const ROWS100: [(&str, u64, u64); 8] = [
        ("zulu", 60, 300),
        ("mike", 10, 40),
        ("delta", 3, 30),
        ("echo", 3, 30),
        ("golf", 20, 20),
        ("kilo", 7, 14),
        ("oscar", 7, 14),
        ("papa", 20, 60),
    ];

    /// N = 100, dl_avg = 22 (so dl/dl_avg = 11/22 = 0.5).
    fn stats100() -> CorpusStats {
        stats(100, 22.0, &ROWS100)
    }

    /// The signatures of `text`, its terms looked up in the dictionary of
    /// `stats` (the one `m` was built from).
    fn sign(m: &dyn SignatureMethod, stats: &CorpusStats, text: &str) -> Vec<Signature> {
        let t = terms(text);
        let ends = [t.len() as u32];
        let doc = DocView { doc_id: 7, terms: &t, sentence_ends: &ends, words: &t, ..Default::default() };
        let mut out = Vec::new();
        m.sign(&crate::methods::term_ids::with_ids(&[doc], &stats.terms)[0], &mut out);
        out
    }

    fn expect(joined: &str) -> Vec<Signature> {
        vec![Signature { slot: 0, sig: crc32fast::hash(joined.as_bytes()) as u64 }]
    }

    #[test]
    fn a1_tf_ties_by_term() {
        // tf: zulu 3, mike 2, then delta echo golf kilo oscar papa all 1.
        // The six: zulu, mike, and the first four of the tf=1 terms by term
        // ascending (delta echo golf kilo); oscar and papa lose the tie.
        let m = TopWords::new(Weighting::Tf, &TopWordsSettings::default(), &stats100());
        assert_eq!(m.id(), "a1");
        assert_eq!(sign(&m, &stats100(), DOC), expect("delta echo golf kilo mike zulu"));
    }

    #[test]
    fn a2_bm25() {
        // TF = tf / (2*(0.25 + 0.75*0.5) + tf) = tf / (1.25 + tf):
        //   tf=3: 3/4.25 = 0.70588, tf=2: 2/3.25 = 0.61538, tf=1: 1/2.25 = 0.44444.
        // IDF = ln((100 - df + 0.5)/(df + 0.5)):
        //   zulu  df 60: ln(40.5/60.5) = -0.40134 -> wt -0.28330
        //   mike  df 10: ln(90.5/10.5) =  2.15398 -> wt  1.32552
        //   delta, echo df 3: ln(97.5/3.5) = 3.32711 -> wt 1.47871 (tie)
        //   kilo, oscar df 7: ln(93.5/7.5) = 2.52306 -> wt 1.12136 (tie)
        //   golf, papa df 20: ln(80.5/20.5) = 1.36784 -> wt 0.60793 (tie at 6th place)
        // Order: delta echo mike kilo oscar golf | papa zulu: golf beats papa by term,
        // and zulu, the most frequent term, is out (negative IDF).
        let m = TopWords::new(Weighting::TfIdf, &TopWordsSettings::default(), &stats100());
        assert_eq!(m.id(), "a2");
        assert_eq!(sign(&m, &stats100(), DOC), expect("delta echo golf kilo mike oscar"));
    }

    #[test]
    fn a3_ridf() {
        // TF = 0.5 + 0.5*tf/3: zulu 1, mike 0.83333, others 0.66667.
        // RIDF = -ln(df/100) + ln(1 - exp(-cf/100)):
        //   zulu  60/300: 0.51083 + ln(1-e^-3.0)  = 0.51083 - 0.05107 = 0.45976 -> wt 0.45976
        //   mike  10/40:  2.30259 + ln(1-e^-0.4)  = 2.30259 - 1.10963 = 1.19296 -> wt 0.99413
        //   delta, echo 3/30: 3.50656 + ln(1-e^-0.3) = 3.50656 - 1.35025 = 2.15631 -> 1.43754
        //   kilo, oscar 7/14: 2.65926 + ln(1-e^-0.14) = 2.65926 - 2.03532 = 0.62394 -> 0.41596
        //   papa  20/60: 1.60944 + ln(1-e^-0.6)  = 1.60944 - 0.79587 = 0.81357 -> 0.54238
        //   golf  20/20: 1.60944 + ln(1-e^-0.2)  = 1.60944 - 1.70777 = -0.09833 -> -0.06555
        // Order: delta echo mike papa zulu kilo | oscar golf: kilo beats oscar by term.
        let m = TopWords::new(Weighting::TfRidf, &TopWordsSettings::default(), &stats100());
        assert_eq!(m.id(), "a3");
        assert_eq!(sign(&m, &stats100(), DOC), expect("delta echo kilo mike papa zulu"));
    }

    #[test]
    fn a10_opt_freq() {
        // N = 1,000,000. TF as in a3: zulu 1, mike 0.83333, others 0.66667.
        // IDF = -ln(df/N); IDF_opt = sqrt(IDF/11.5) if IDF < 11.5 else 11.5/IDF:
        //   zulu  df 100000: 2.30259 -> sqrt(0.20023) = 0.44746 -> wt 0.44746
        //   mike  df 10:    11.51293 (>= 11.5) -> 11.5/11.51293 = 0.99888 -> wt 0.83240
        //   delta, papa df 1: 13.81551 -> 11.5/13.81551 = 0.83240 -> wt 0.55493
        //   echo  df 100:    9.21034 -> sqrt(0.80090) = 0.89493 -> wt 0.59662
        //   golf, kilo, oscar df 1000: 6.90776 -> sqrt(0.60067) = 0.77503 -> wt 0.51669
        // Order: mike echo delta papa golf kilo | oscar zulu: oscar loses the three-way tie.
        let s = stats(
            1_000_000,
            11.0,
            &[
                ("zulu", 100_000, 100_000),
                ("mike", 10, 10),
                ("delta", 1, 1),
                ("papa", 1, 1),
                ("echo", 100, 100),
                ("golf", 1000, 1000),
                ("kilo", 1000, 1000),
                ("oscar", 1000, 1000),
            ],
        );
        let m = TopWords::new(Weighting::OptFreq, &TopWordsSettings::default(), &s);
        assert_eq!(m.id(), "a10");
        assert_eq!(sign(&m, &s, DOC), expect("delta echo golf kilo mike papa"));
    }

    #[test]
    fn few_terms_use_what_they_have_and_empty_has_none() {
        let m = TopWords::new(Weighting::Tf, &TopWordsSettings::default(), &stats100());
        assert_eq!(sign(&m, &stats100(), "papa mike papa"), expect("mike papa"));
        assert!(sign(&m, &stats100(), "").is_empty());
    }

    #[test]
    fn unknown_term_counts_as_df_1_cf_tf() {
        // "yankee" is absent from stats100; it must weigh as if df=1, cf=tf=2.
        let doc = "yankee yankee zulu mike delta echo golf kilo oscar papa";
        let with_it = stats(100, 22.0, &[ROWS100.as_slice(), &[("yankee", 1, 2)]].concat());
        for w in [Weighting::TfIdf, Weighting::TfRidf, Weighting::OptFreq] {
            let cfg = TopWordsSettings::default();
            let missing = sign(&TopWords::new(w, &cfg, &stats100()), &stats100(), doc);
            assert_eq!(missing, sign(&TopWords::new(w, &cfg, &with_it), &with_it, doc), "{w:?}");
        }
    }
}
