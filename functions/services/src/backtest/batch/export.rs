//! A finished batch's results table as a file (Parquet, Arrow), written a
//! chunk at a time: a million-row table never has all its rows in memory,
//! only the file being written.

use super::{BatchParams, BatchRow, METRICS};
use platform::PortError;
use platform::marketdata::columns::Column;
use platform::marketdata::interchange::{PartsWriter, Table, TableFormat};
use platform::tasks::{Task, TaskStore};
use serde_json::Value;
use std::collections::HashMap;

/// How a grid path's column is typed: by every value the grid gives it,
/// as [`json_column`](platform::marketdata::interchange::json_column) types
/// a column, so every part of a file written a chunk at a time has the
/// same columns.
pub type Kind = platform::marketdata::interchange::JsonKind;

/// The kind of `path`'s column of `rows` (their values, absent ones aside).
pub fn kind_of_rows(path: &str, rows: &[BatchRow]) -> Kind {
    Kind::of(rows.iter().filter_map(|r| r.params.get(path)))
}

/// The results table's columns: index, the grid's paths (typed by `kinds`),
/// the symbol, the metrics, the error.
pub fn table(paths: &[(String, Kind)], rows: &[BatchRow]) -> Table {
    let mut cols = vec![(
        "index".to_string(),
        Column::Integer(rows.iter().map(|r| Some(r.index as i64)).collect()),
    )];
    for (p, kind) in paths {
        let values: Vec<Option<&Value>> = rows.iter().map(|r| r.params.get(p)).collect();
        cols.push((p.clone(), kind.column(&values)));
    }
    cols.push((
        "Symbol".into(),
        Column::Text(rows.iter().map(|r| r.symbol.clone()).collect()),
    ));
    for (k, m) in METRICS.iter().enumerate() {
        // Counts are integers here as in a single run's answer.
        let column = if BatchRow::is_count(k) {
            Column::Integer(rows.iter().map(|r| r.count(k)).collect())
        } else {
            Column::Number(rows.iter().map(|r| r.metric(k)).collect())
        };
        cols.push((m.to_string(), column));
    }
    cols.push((
        "error".into(),
        Column::Text(rows.iter().map(|r| r.error.clone()).collect()),
    ));
    cols
}

/// The grid's paths of a batch with the type of each one's column.
pub fn typed_paths(p: &BatchParams) -> Result<Vec<(String, Kind)>, PortError> {
    let grid = super::expand(&p.request, usize::MAX)
        .map_err(|e| PortError::fault("batch record", std::io::Error::other(e.to_string())))?;
    Ok(match grid.varied {
        super::Points::List(_) => Vec::new(),
        super::Points::Grid(axes) => axes
            .into_iter()
            .map(|(path, values)| {
                let kind = Kind::of(values.iter());
                (path, kind)
            })
            .collect(),
    })
}

/// The finished batch's table in `format` with `metadata`, a chunk at a
/// time; `None` while it has not finished.
pub async fn export(
    tasks: &dyn TaskStore,
    record: &Task,
    format: TableFormat,
    metadata: HashMap<String, String>,
) -> Result<Option<bytes::Bytes>, PortError> {
    let Some((p, fanned)) = super::jobs::finished(tasks, record).await? else {
        return Ok(None);
    };
    use futures::StreamExt;
    let paths = std::sync::Arc::new(typed_paths(&p)?);
    // The file is written on the blocking pool too, a part at a time as
    // they come, while the next two chunks are read and made tables there:
    // a million rows are 256 chunks of JSON.
    let (send, mut parts_in) = tokio::sync::mpsc::channel::<Table>(1);
    let writer = tokio::task::spawn_blocking(move || {
        let mut out = PartsWriter::new(format, metadata);
        while let Some(part) = parts_in.blocking_recv() {
            out.write(part)?;
        }
        out.finish()
    });
    let mut parts = futures::stream::iter(fanned.chunks.into_iter().enumerate())
        .map(|(k, id)| {
            let paths = paths.clone();
            let span = p.span(k);
            async move {
                let (chunk, result) = super::jobs::chunk_task(tasks, id).await?;
                tokio::task::spawn_blocking(move || {
                    let mut rows = super::jobs::rows_of(chunk, result, span)?;
                    rows.sort_by_key(|r| r.index);
                    Ok::<_, PortError>(table(&paths, &rows))
                })
                .await
                .map_err(PortError::internal)?
            }
        })
        .buffered(2);
    while let Some(part) = parts.next().await {
        // A closed channel: the writer failed, and says why below.
        if send.send(part?).await.is_err() {
            break;
        }
    }
    drop(send);
    writer.await.map_err(PortError::internal)?
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    #[test]
    fn a_path_s_column_is_typed_by_the_grid_as_by_the_rows() {
        let kind = |values: &[Value]| Kind::of(values.iter());
        assert_eq!(kind(&[json!(5), json!(-2)]), Kind::Integer);
        assert_eq!(kind(&[json!(5), json!(2.5)]), Kind::Number);
        assert_eq!(kind(&[json!(5), json!("10")]), Kind::Text);
        assert_eq!(kind(&[json!(null)]), Kind::Text);
        let row = |v: Value| {
            let mut params = Map::new();
            params.insert("p".into(), v);
            BatchRow::failed(0, params, "x".into())
        };
        let rows = [row(json!(5)), row(json!(2.5))];
        assert_eq!(kind_of_rows("p", &rows), Kind::Number);
        let cols = table(&[("p".into(), Kind::Number)], &rows);
        assert_eq!(cols[1].1, Column::Number(vec![Some(5.0), Some(2.5)]));
        let cols = table(
            &[("p".into(), Kind::Text)],
            &[row(json!("//21")), row(json!(true))],
        );
        assert_eq!(
            cols[1].1,
            Column::Text(vec![Some("//21".into()), Some("true".into())])
        );
    }
}
