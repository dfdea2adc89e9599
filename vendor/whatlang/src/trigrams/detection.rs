use hashbrown::HashMap;

use super::LangProfileList;
use super::utils::{TrigramsWithPositions, get_trigrams_with_positions, pack};
use super::{ARABIC_LANGS, CYRILLIC_LANGS, DEVANAGARI_LANGS, HEBREW_LANGS, LATIN_LANGS};
use super::{MAX_TOTAL_DISTANCE, MAX_TRIGRAM_DISTANCE};
use crate::Lang;
use crate::core::{FilterList, Info, InternalQuery, Text, calculate_confidence};
use crate::scripts::grouping::MultiLangScript;
use std::sync::LazyLock;

#[derive(Debug)]
pub struct RawOutcome {
    pub trigrams_count: usize,
    #[allow(dead_code)]
    pub raw_distances: Vec<(Lang, u32)>,
    pub scores: Vec<(Lang, f64)>,
}

#[inline]
pub fn detect(iquery: &InternalQuery) -> Option<Info> {
    let raw_outcome = raw_detect(iquery);
    let RawOutcome {
        trigrams_count,
        scores,
        ..
    } = raw_outcome;

    let mut raw_scores_iter = scores.into_iter();

    let opt_lang_score1 = raw_scores_iter.next();
    let opt_lang_score2 = raw_scores_iter.next();

    // TODO: Logic is duplicated in alphabets. Consider refactoring
    opt_lang_score1.map(|(lang1, score1)| {
        let script = iquery.multi_lang_script.to_script();
        let confidence = if let Some((_, score2)) = opt_lang_score2 {
            calculate_confidence(score1, score2, trigrams_count)
        } else {
            1.0
        };
        Info::new(script, lang1, confidence)
    })
}

#[inline]
pub fn raw_detect(iquery: &InternalQuery) -> RawOutcome {
    let (lang_profile_list, inverted) = script_to_lang_profile_list(iquery.multi_lang_script);
    calculate_scores_in_profiles(
        &iquery.text,
        iquery.filter_list,
        lang_profile_list,
        inverted,
    )
}

fn script_to_lang_profile_list(
    script: MultiLangScript,
) -> (LangProfileList, &'static InvertedProfiles) {
    use MultiLangScript as MLS;
    static LATIN: LazyLock<InvertedProfiles> = LazyLock::new(|| InvertedProfiles::new(LATIN_LANGS));
    static CYRILLIC: LazyLock<InvertedProfiles> =
        LazyLock::new(|| InvertedProfiles::new(CYRILLIC_LANGS));
    static ARABIC: LazyLock<InvertedProfiles> =
        LazyLock::new(|| InvertedProfiles::new(ARABIC_LANGS));
    static DEVANAGARI: LazyLock<InvertedProfiles> =
        LazyLock::new(|| InvertedProfiles::new(DEVANAGARI_LANGS));
    static HEBREW: LazyLock<InvertedProfiles> =
        LazyLock::new(|| InvertedProfiles::new(HEBREW_LANGS));
    match script {
        MLS::Latin => (LATIN_LANGS, &LATIN),
        MLS::Cyrillic => (CYRILLIC_LANGS, &CYRILLIC),
        MLS::Arabic => (ARABIC_LANGS, &ARABIC),
        MLS::Devanagari => (DEVANAGARI_LANGS, &DEVANAGARI),
        MLS::Hebrew => (HEBREW_LANGS, &HEBREW),
    }
}

/// neardup: the profiles of one script turned around, trigram to the
/// (profile, rank) pairs that hold it. A text has at most
/// `TEXT_TRIGRAMS_SIZE` ranked trigrams, and a script up to ~40 profiles of
/// 300: looking the text's trigrams up here costs ≤ 600 probes instead of
/// 300 per profile, for the same sums. The pairs are one flat array (a
/// few allocations, made when a script is first seen in the middle of a
/// run, rather than one per trigram that would pin the heap).
struct InvertedProfiles {
    /// Each trigram's (start, end) in `postings`.
    ranges: HashMap<u64, (u32, u32)>,
    /// (profile, rank) pairs, grouped by trigram.
    postings: Vec<(u16, u16)>,
    /// Each profile's distance when none of its trigrams is in the text.
    all_missing: Vec<i64>,
}

impl InvertedProfiles {
    fn new(list: LangProfileList) -> Self {
        let mut triples: Vec<(u64, u16, u16)> = Vec::new();
        for (profile, &(_, trigrams)) in list.iter().enumerate() {
            for (rank, &trigram) in trigrams.iter().enumerate() {
                triples.push((
                    pack(trigram.0, trigram.1, trigram.2),
                    profile as u16,
                    rank as u16,
                ));
            }
        }
        triples.sort_unstable();
        let mut ranges = HashMap::new();
        let mut postings = Vec::with_capacity(triples.len());
        for (i, &(trigram, profile, rank)) in triples.iter().enumerate() {
            if i == 0 || triples[i - 1].0 != trigram {
                ranges.insert(trigram, (i as u32, i as u32));
            }
            ranges.get_mut(&trigram).expect("inserted above").1 = i as u32 + 1;
            postings.push((profile, rank));
        }
        let all_missing = list
            .iter()
            .map(|(_, trigrams)| trigrams.len() as i64 * MAX_TRIGRAM_DISTANCE as i64)
            .collect();
        Self {
            ranges,
            postings,
            all_missing,
        }
    }

    /// Every profile's sum over its trigrams of |text rank − profile rank|,
    /// or `MAX_TRIGRAM_DISTANCE` for a trigram the text's ranking lacks:
    /// the upstream `calculate_distance`'s sum, before its correction for
    /// short texts ([`finish_distance`]).
    fn sums(&self, text_trigrams: &[(u64, u32)]) -> Vec<i64> {
        let mut sums = self.all_missing.clone();
        for (trigram, text_rank) in text_trigrams {
            let Some(&(start, end)) = self.ranges.get(trigram) else {
                continue;
            };
            for &(profile, rank) in &self.postings[start as usize..end as usize] {
                sums[profile as usize] +=
                    (*text_rank as i64 - rank as i64).abs() - MAX_TRIGRAM_DISTANCE as i64;
            }
        }
        sums
    }
}

#[inline]
fn calculate_scores_in_profiles(
    text: &Text,
    filter_list: &FilterList,
    lang_profile_list: LangProfileList,
    inverted: &InvertedProfiles,
) -> RawOutcome {
    let mut lang_distances: Vec<(Lang, u32)> = vec![];

    let TrigramsWithPositions {
        trigram_positions, ..
    } = get_trigrams_with_positions(&text.lowercase());
    let unique_trigrams_count = trigram_positions.len();
    let sums = inverted.sums(&trigram_positions);

    for (profile, &(lang, _)) in lang_profile_list.iter().enumerate() {
        if !filter_list.is_allowed(lang) {
            continue;
        }
        let dist = finish_distance(sums[profile] as u32, unique_trigrams_count);
        lang_distances.push(((lang), dist));
    }

    // Sort languages by distance
    lang_distances.sort_unstable_by_key(|(_, dist)| *dist);

    let max_dist = unique_trigrams_count as u32 * MAX_TRIGRAM_DISTANCE;

    let raw_scores = lang_distances
        .iter()
        .map(|&(lang, distance)| (lang, distance_to_raw_score(distance, max_dist)))
        .collect();

    RawOutcome {
        trigrams_count: unique_trigrams_count,
        scores: raw_scores,
        raw_distances: lang_distances,
    }
}

/// The upstream's correction of a profile's sum for texts of fewer than
/// `MAX_TRIGRAM_DISTANCE` distinct trigrams, and its clamp.
#[inline]
fn finish_distance(mut total_dist: u32, text_trigrams: usize) -> u32 {
    let count = text_trigrams as u32;

    if MAX_TRIGRAM_DISTANCE > count {
        let delta = MAX_TRIGRAM_DISTANCE - count;
        total_dist -= delta * MAX_TRIGRAM_DISTANCE;
    }

    total_dist.clamp(0, MAX_TOTAL_DISTANCE)
}

#[inline]
fn distance_to_raw_score(distance: u32, max_distance: u32) -> f64 {
    let similarity = max_distance - distance;
    similarity as f64 / max_distance as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_when_german_is_given() {
        let text = "Die Ordnung muss für immer in diesem Codebase bleiben";
        let iq = InternalQuery {
            text: Text::new(text),
            filter_list: &FilterList::default(),
            multi_lang_script: MultiLangScript::Latin,
        };
        let raw_outcome = raw_detect(&iq);

        assert_eq!(raw_outcome.trigrams_count, 50);

        let &(first_lang, first_score) = raw_outcome.scores.first().unwrap();
        let &(_last_lang, last_score) = raw_outcome.scores.last().unwrap();

        assert_eq!(first_lang, Lang::Deu);

        assert!(first_score >= 0.0);
        assert!(first_score <= 1.0);

        assert!(last_score >= 0.0);
        assert!(last_score <= 1.0);
    }
}
