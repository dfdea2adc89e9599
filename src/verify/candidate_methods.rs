//! The methods of the candidate edges as bits of a mask: how `verify`,
//! `place`, `evaluate` and the SQL that masks pairs name the methods that
//! proposed a pair. Read from `candidates` by the verify stages
//! (`crate::stages::verify::inputs::load_candidate_methods`).

use anyhow::Result;

use crate::methods::registry::includes_comparison;

/// The methods of `candidates`, sorted: bit i of a mask of methods stands
/// for `methods[i]`, in this process and in the SQL that masks pairs by
/// the same bits (`verify_pairs.methods`, `jobs/evaluate_found.sql`).
pub struct CandidateMethods {
    pub methods: Vec<String>,
}

impl CandidateMethods {
    /// The methods `methods` (sorted, distinct), at most 64: one bit of a
    /// mask each.
    pub fn new(methods: Vec<String>) -> Result<CandidateMethods> {
        anyhow::ensure!(methods.len() <= 64, "more than 64 methods in candidates");
        Ok(CandidateMethods { methods })
    }

    /// The sorted method names of a mask.
    pub fn names(&self, mask: u64) -> impl Iterator<Item = &str> {
        self.methods.iter().enumerate().filter(move |(i, _)| mask >> i & 1 == 1).map(|(_, m)| m.as_str())
    }

    /// The mask of the methods that include their comparison
    /// ([`crate::methods::registry::MethodSpec::includes_comparison`]): `verify` compares every
    /// pair these methods propose.
    pub fn comparing_mask(&self) -> u64 {
        self.methods.iter().enumerate().filter(|(_, m)| includes_comparison(m)).fold(0, |mask, (i, _)| mask | 1 << i)
    }

    /// The methods as the rows of a SQL `VALUES` list of (method, bit,
    /// comparing): `('a0', CAST(1 AS BIGINT UNSIGNED), false), …`, the
    /// `${methods}` of the jobs that mask pairs. None without a method:
    /// SQL has no empty `VALUES` list.
    pub fn sql_values(&self) -> Option<String> {
        let rows: Vec<String> = self
            .methods
            .iter()
            .enumerate()
            .map(|(i, m)| {
                format!(
                    "('{}', CAST({} AS BIGINT UNSIGNED), {})",
                    m.replace('\'', "''"),
                    1u64 << i,
                    includes_comparison(m)
                )
            })
            .collect();
        (!rows.is_empty()).then(|| rows.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit i of a mask names `methods[i]`, and the `VALUES` rows carry
    /// each method's bit; no method has no rows.
    #[test]
    fn masks_name_the_methods_by_bit() {
        let methods = CandidateMethods::new(vec!["a0".into(), "b'1".into(), "c2".into()]).unwrap();
        assert_eq!(methods.names(0b101).collect::<Vec<_>>(), ["a0", "c2"]);
        let values = methods.sql_values().unwrap();
        assert!(values.starts_with("('a0', CAST(1 AS BIGINT UNSIGNED), "), "{values}");
        assert!(values.contains("('b''1', CAST(2 AS BIGINT UNSIGNED), "), "{values}");
        assert!(values.contains("('c2', CAST(4 AS BIGINT UNSIGNED), "), "{values}");
        assert_eq!(CandidateMethods::new(Vec::new()).unwrap().sql_values(), None);
        assert!(CandidateMethods::new((0..65).map(|i| i.to_string()).collect()).is_err());
    }
}
