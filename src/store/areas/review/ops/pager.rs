//! Where a page of a validator's queue lies: the rows before a middle page (for the
//! pager's words), the cursor of a page asked for by number, a cursor's row.

use crate::domain::Stage;
use crate::domain::paging::Side;
use crate::error::Result;
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::db::{Tx, named, sql};
use crate::store::review::QueueQuery;

/// The queue's rows the filters keep, each with its place in the queue's order.
macro_rules! queue_in_order {
    () => {
        concat!(
            "FROM ",
            queue_rows!(),
            " JOIN items i ON i.id = u.id WHERE ",
            queue_filters!("u.task_id", "u.decided", "", "u.item_key")
        )
    };
}

/// The row after which page `:skip / limit + 1` of a filtered queue starts.
const QUEUE_ROW_AT: &str = concat!(
    "SELECT u.item_key, u.decided ",
    queue_in_order!(),
    " ORDER BY u.decided, i.sort_key, i.id LIMIT 1 OFFSET :skip"
);

/// How many rows of a filtered queue come before a row (`:at_decided`, `:at_sort`,
/// `:at_id`), the row itself too with `:inclusive` = 1.
const QUEUE_ROWS_BEFORE: &str = concat!(
    "SELECT COUNT(*) ",
    queue_in_order!(),
    " AND (u.decided < :at_decided OR (u.decided = :at_decided
           AND (i.sort_key < :at_sort OR (i.sort_key = :at_sort
                AND (i.id < :at_id OR (:inclusive = 1 AND i.id = :at_id))))))"
);

/// The cursor of page `n` of a filtered queue (the pager's jump): after the last row of
/// page `n - 1`; none for the first page, the end past the last row.
pub(super) async fn page_cursor(
    c: &mut impl Tx,
    campaign: &Campaign,
    validator: &User,
    stage: Stage,
    query: &QueueQuery,
    n: usize,
) -> Result<Option<crate::domain::paging::Cursor>> {
    use crate::domain::paging::Cursor;
    let skip = n.saturating_sub(1).saturating_mul(query.limit.max(1));
    if skip == 0 {
        return Ok(None);
    }
    let found: Option<(String, i64)> = c
        .fetch_opt(
            sql!(QUEUE_ROW_AT),
            named! {
                campaign: campaign.id,
                validator: validator.id,
                stage: stage.number(),
                task: query.task.as_deref().unwrap_or(""),
                decided: query.decided.map_or(-1, i64::from),
                prefix: query.prefix.as_deref().unwrap_or(""),
                skip: i64::try_from(skip - 1).unwrap_or(i64::MAX),
            },
        )
        .await?;
    Ok(Some(match found {
        Some((key, decided)) => Cursor {
            side: Side::After,
            decided: decided != 0,
            key,
        },
        None => Cursor {
            side: Side::Before,
            decided: true,
            key: String::new(),
        },
    }))
}

/// A cursor's row in a validator's queue: its sort key and id (the newest version's).
pub(super) async fn cursor_place(
    c: &mut impl Tx,
    campaign: &Campaign,
    validator: &User,
    stage: Stage,
    key: &str,
) -> Result<Option<(String, i64)>> {
    c.fetch_opt(
        sql!(
            "SELECT sort_key, id FROM items
             WHERE campaign_id = :campaign AND stage = :stage AND item_key = :key
               AND (queue1 = :validator OR queue2 = :validator)
             ORDER BY id DESC LIMIT 1"
        ),
        named! {
            campaign: campaign.id,
            validator: validator.id,
            stage: stage.number(),
            key,
        },
    )
    .await
}

/// How many rows of a filtered queue lie before a middle page's cursor (with it, when
/// the page follows it), so that the pager can name the page's rows.
pub(super) async fn rows_before(
    c: &mut impl Tx,
    campaign: &Campaign,
    validator: &User,
    stage: Stage,
    query: &QueueQuery,
    cursor: &crate::domain::paging::Cursor,
) -> Result<usize> {
    let place = cursor_place(c, campaign, validator, stage, &cursor.key).await?;
    let Some((at_sort, at_id)) = place else {
        return Ok(0);
    };
    let n: i64 = c
        .scalar(
            sql!(QUEUE_ROWS_BEFORE),
            named! {
                campaign: campaign.id,
                validator: validator.id,
                stage: stage.number(),
                task: query.task.as_deref().unwrap_or(""),
                decided: query.decided.map_or(-1, i64::from),
                prefix: query.prefix.as_deref().unwrap_or(""),
                at_decided: i64::from(cursor.decided),
                at_sort: at_sort.as_str(),
                at_id,
                inclusive: i64::from(cursor.side == Side::After),
            },
        )
        .await?;
    Ok(usize::try_from(n).unwrap_or(0))
}
