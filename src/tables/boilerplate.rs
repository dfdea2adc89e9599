//! The `boilerplate` table read back as [`Boilerplate`]: the template lines
//! of every host, which the `tokens` stage and `pipeline export` leave out
//! of a document's text.

use anyhow::Result;
use futures::StreamExt;

use crate::tables::columns::boilerplate;
use crate::text::blocks::Boilerplate;

/// Reads the `boilerplate` table into memory (one entry per template line
/// of a host: a small table).
pub async fn load_boilerplate(session: &datafusion::prelude::SessionContext) -> Result<Boilerplate> {
    let mut lines = Boilerplate::default();
    let mut stream = session.sql("SELECT host, block_hash FROM boilerplate").await?.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let (hosts, keys) = (boilerplate::host(&batch)?, boilerplate::block_hash(&batch)?);
        for i in 0..batch.num_rows() {
            lines.insert(hosts.value(i), keys.value(i));
        }
    }
    Ok(lines)
}
