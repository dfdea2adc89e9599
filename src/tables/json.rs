//! Tables as JSON for other tools (`query --format json`, the JSON Lines
//! export): every UInt64 value is written as a string. Doc ids, cluster ids
//! and hashes are 64-bit and mostly above 2^53, which JSON readers that
//! hold numbers as doubles (JavaScript, jq) round to another id; a string
//! keeps every digit. The whole column is strings, whatever its values, so
//! that a reader meets one type per field.

use anyhow::Result;
use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

/// `batch` with its UInt64 columns (also inside lists and structs) cast to
/// strings, ready for arrow's JSON writers.
pub fn lossless(batch: &RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    if schema.fields().iter().all(|f| lossless_type(f.data_type()) == *f.data_type()) {
        return Ok(batch.clone());
    }
    let fields: Vec<Field> = schema.fields().iter().map(|f| lossless_field(f)).collect();
    let columns = batch
        .columns()
        .iter()
        .zip(&fields)
        .map(|(column, field)| Ok(arrow::compute::cast(column, field.data_type())?))
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new(Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())), columns)?)
}

fn lossless_field(field: &Field) -> Field {
    field.clone().with_data_type(lossless_type(field.data_type()))
}

/// The type a value of `data_type` is written as: UInt64 becomes Utf8.
fn lossless_type(data_type: &DataType) -> DataType {
    match data_type {
        DataType::UInt64 => DataType::Utf8,
        DataType::List(f) => DataType::List(Arc::new(lossless_field(f))),
        DataType::LargeList(f) => DataType::LargeList(Arc::new(lossless_field(f))),
        DataType::Struct(fields) => {
            DataType::Struct(fields.iter().map(|f| lossless_field(f)).collect::<Vec<_>>().into())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, Int64Array, ListArray, UInt64Array};

    fn json_lines(batch: &RecordBatch) -> String {
        let mut bytes = Vec::new();
        let mut writer = arrow::json::LineDelimitedWriter::new(&mut bytes);
        writer.write(&lossless(batch).unwrap()).unwrap();
        writer.finish().unwrap();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn ids_above_2_to_the_53_keep_every_digit() {
        // 2^53 + 1 is the first integer a double cannot hold; u64::MAX the last id.
        let ids: ArrayRef = Arc::new(UInt64Array::from(vec![Some(9_007_199_254_740_993), Some(u64::MAX), None]));
        let counts: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
        let lists: ArrayRef = Arc::new(ListArray::from_iter_primitive::<arrow::datatypes::UInt64Type, _, _>(vec![
            Some(vec![Some(18_446_744_073_709_551_614)]),
            Some(vec![]),
            None,
        ]));
        let batch = RecordBatch::try_from_iter([("doc_id", ids), ("n", counts), ("members", lists)]).unwrap();
        assert_eq!(
            json_lines(&batch),
            "{\"doc_id\":\"9007199254740993\",\"n\":1,\"members\":[\"18446744073709551614\"]}\n\
             {\"doc_id\":\"18446744073709551615\",\"n\":2,\"members\":[]}\n\
             {\"n\":3}\n"
        );
        // Without UInt64 the batch is written as it is.
        let plain = RecordBatch::try_from_iter([("n", Arc::new(Int64Array::from(vec![7])) as ArrayRef)]).unwrap();
        assert_eq!(json_lines(&plain), "{\"n\":7}\n");
    }
}
