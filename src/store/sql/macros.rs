// SQL fragments the shared SQL repeats (included by each backend before the shared
// modules, so that `concat!` can build whole statements from them).

/// The columns of `ItemViewRow`: an item `i` with its task `t`, version `v`, clip `c`
/// and question `q` (joined by [`item_joins!`]).
macro_rules! item_columns {
    () => {
        "i.id, i.stage, i.outcome, i.item_key, v.id AS version_id, v.version, v.fields, v.media_type,
         v.media_sha256, t.code AS task, c.clip_key, q.qa_type, q.level, q.body, q.options, q.answer "
    };
}

macro_rules! item_joins {
    () => {
        " FROM items i
         JOIN tasks t ON t.id = i.task_id
         JOIN clip_versions v ON v.id = i.clip_version_id
         JOIN clips c ON c.id = v.clip_id
         LEFT JOIN questions q ON q.id = i.question_id "
    };
}

/// The columns of `ItemViewRow` after `SELECT`, with the joins after `FROM`.
macro_rules! item_view {
    () => {
        concat!(item_columns!(), item_joins!())
    };
}

/// Whether the validator `$n` (a parameter) has passed the campaign's calibration
/// gate, as a column: NULL outside the pool, 0 before calibration is passed, 1 after.
macro_rules! gate {
    ($campaign:literal, $user:literal) => {
        concat!(
            "(SELECT m.cleared FROM pool_members m WHERE m.campaign_id = ",
            $campaign,
            " AND m.user_id = ",
            $user,
            ")"
        )
    };
}
