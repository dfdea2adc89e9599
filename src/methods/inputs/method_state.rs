//! The `method_state` table read back: the state a method chose from the
//! documents in stage `method_state` (a9's descriptive words), which every task of
//! `signatures` signs with.

use anyhow::Result;

use crate::methods::StateRow;
use crate::tables::columns::method_state;

/// The `method_state` rows of `method`, by slot and term.
pub async fn load_method_state(session: &datafusion::prelude::SessionContext, method: &str) -> Result<Vec<StateRow>> {
    let sql = format!("SELECT slot, term, value FROM method_state WHERE method = '{method}' ORDER BY slot, term");
    let mut rows = Vec::new();
    for b in session.sql(&sql).await?.collect().await? {
        let (slots, terms, values) = (method_state::slot(&b)?, method_state::term(&b)?, method_state::value(&b)?);
        for i in 0..b.num_rows() {
            rows.push(StateRow { slot: slots.value(i), term: terms.value(i).to_string(), value: values.value(i) });
        }
    }
    Ok(rows)
}
