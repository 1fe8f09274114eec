//! Upgrading a database made by an earlier version keeps every record and fills the
//! columns later migrations add.

use sqlx::any::AnyPoolOptions;
use sqlx::migrate::Migrator;
use std::borrow::Cow;

#[tokio::test]
async fn an_older_database_is_upgraded_with_its_records_and_the_new_columns_filled() {
    sqlx::any::install_default_drivers();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    std::fs::create_dir_all(&path).unwrap();
    let url = tandem::Store::sqlite_url(&path.join("tandem.db"));
    let pool = AnyPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .unwrap();
    // The schema as it was before migration 4.
    let all = sqlx::migrate!("migrations/sqlite");
    let old = Migrator {
        migrations: Cow::Owned(
            all.migrations
                .iter()
                .filter(|m| m.version < 4)
                .cloned()
                .collect(),
        ),
        ..Migrator::DEFAULT
    };
    old.run(&pool).await.unwrap();
    for sql in [
        "INSERT INTO campaigns (id, name, taxonomy, created_at) VALUES (1, 'default', '{}', 0)",
        "INSERT INTO campaigns (id, name, taxonomy, created_at) VALUES (2, 'other', '{}', 0)",
        "INSERT INTO users (id, name, role, password_hash, created_at) VALUES (1, 'a', 'validator', 'x', 0), (2, 'b', 'validator', 'x', 0)",
        "INSERT INTO users (id, name, role, password_hash, created_at) VALUES (3, 'c', 'author', 'x', 0), (4, 'p', 'participant', 'x', 0), (5, 'z', 'admin', 'x', 0)",
        "INSERT INTO pool_members (campaign_id, user_id, pool_index) VALUES (1, 1, 0), (1, 2, 1)",
        "INSERT INTO tasks (id, campaign_id, position, code, name, scale, perspective, dynamics) VALUES (1, 1, 0, 'MC_F_EGO_STA', 'n', 'figural', 'egocentric', 'static')",
        "INSERT INTO imports (id, campaign_id, manifest, manifest_sha256, clips_new, versions_new, imported_at) VALUES (1, 1, 'm', 's', 1, 0, 0)",
        "INSERT INTO clips (id, campaign_id, task_id, clip_key, current_version_id) VALUES (1, 1, 1, 'C', 2)",
        "INSERT INTO clip_versions (id, clip_id, version, media_sha256, media_type, media_size, source_file, fields, import_id, created_at)
         VALUES (1, 1, 1, 'h1', 'video/mp4', 1, 'f', '{}', 1, 0), (2, 1, 2, 'h2', 'video/mp4', 1, 'f', '{}', 1, 0)",
        "INSERT INTO questions (id, clip_version_id, position, question_key, qa_type, level, body, options, answer) VALUES (1, 2, 0, 'C_OA', 'OA', 'L1', 'q', '[\"x\",\"y\"]', 0)",
        "INSERT INTO items (id, campaign_id, task_id, stage, clip_version_id, outcome, rater1_id, rater2_id, completed_at) VALUES (1, 1, 1, 1, 1, 'pending', 1, 2, NULL)",
        "INSERT INTO items (id, campaign_id, task_id, stage, clip_version_id, outcome) VALUES (2, 1, 1, 1, 2, 'pending')",
        "INSERT INTO items (id, campaign_id, task_id, stage, clip_version_id, question_id, parent_item_id, outcome) VALUES (3, 1, 1, 2, 2, 1, 2, 'pending')",
        "INSERT INTO decisions (id, item_id, validator_id, seq, verdict, reasons, note, time_spent_ms, decided_at, recorded_at, origin)
         VALUES (1, 1, 1, 1, 'reject', 'prompt_drift', '', 10, 0, 0, 'api'), (2, 1, 2, 1, 'reject', 'other', 'n', 20, 0, 0, 'api')",
        "UPDATE items SET outcome = 'both_reject', verdict1 = 'reject', verdict2 = 'reject', final1_id = 1, final2_id = 2, completed_at = 1 WHERE id = 1",
    ] {
        sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&pool).await.unwrap();
    }
    pool.close().await;

    // Opening with the current version runs the rest.
    let _store = tandem::Store::open(&url).await.unwrap();
    let db = crate::helpers::sql_pool(&url).await;
    let row: (i64, Option<String>, Option<String>, Option<String>) =
        sqlx::query_as("SELECT clip_version, qa_type, reasons1, reasons2 FROM items WHERE id = 1")
            .fetch_one(&db)
            .await
            .unwrap();
    assert_eq!(
        row,
        (1, None, Some("prompt_drift".into()), Some("other".into()))
    );
    let v2: (i64, Option<String>) =
        sqlx::query_as("SELECT clip_version, qa_type FROM items WHERE id = 3")
            .fetch_one(&db)
            .await
            .unwrap();
    assert_eq!(v2, (2, Some("OA".into())));
    let d: Vec<(i64, i64)> = sqlx::query_as("SELECT campaign_id, stage FROM decisions ORDER BY id")
        .fetch_all(&db)
        .await
        .unwrap();
    assert_eq!(d, vec![(1, 1), (1, 1)]);
    // Migration 8: each item carries its key, whether it is of the newest version and
    // its place in review order; task attributes are one JSON object.
    let items: Vec<(i64, String, i64, String)> =
        sqlx::query_as("SELECT id, item_key, is_current, sort_key FROM items ORDER BY id")
            .fetch_all(&db)
            .await
            .unwrap();
    assert_eq!(
        items,
        vec![
            (1, "C".into(), 0, "000000|C".into()),
            (2, "C".into(), 1, "000000|C".into()),
            (3, "C_OA".into(), 1, "000000|C|000000".into()),
        ]
    );
    let attributes: String = sqlx::query_scalar("SELECT attributes FROM tasks WHERE id = 1")
        .fetch_one(&db)
        .await
        .unwrap();
    let attributes: serde_json::Value = serde_json::from_str(&attributes).unwrap();
    assert_eq!(attributes["scale"], "figural");
    assert_eq!(attributes["dynamics"], "static");
    // Migration 20: items are held for no sample, in no lot; the outcome `by_sample`
    // exists, only for an undrawn item of a lot.
    let sampled: Vec<(i64, Option<i64>, i64)> =
        sqlx::query_as("SELECT held, lot_id, drawn FROM items ORDER BY id")
            .fetch_all(&db)
            .await
            .unwrap();
    assert_eq!(sampled, vec![(0, None, 0); 3]);
    assert!(
        sqlx::query("UPDATE items SET outcome = 'by_sample', completed_at = 1 WHERE id = 2")
            .execute(&db)
            .await
            .is_err(),
        "retained by sample outside a lot"
    );
    // Migration 21: roles are held per campaign, and each account keeps what its global
    // role allowed: validators in the campaign whose pool they are in, authors and
    // participants in every campaign; admins stay server-wide.
    let members: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT m.campaign_id, u.name, m.role FROM campaign_members m JOIN users u ON u.id = m.user_id
         ORDER BY m.campaign_id, u.name",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    let member = |c: i64, n: &str, r: &str| (c, n.to_string(), r.to_string());
    assert_eq!(
        members,
        vec![
            member(1, "a", "validator"),
            member(1, "b", "validator"),
            member(1, "c", "author"),
            member(1, "p", "participant"),
            member(2, "c", "author"),
            member(2, "p", "participant"),
        ]
    );
    let admins: Vec<(String, i64)> = sqlx::query_as("SELECT name, is_admin FROM users ORDER BY id")
        .fetch_all(&db)
        .await
        .unwrap();
    assert_eq!(
        admins
            .iter()
            .filter(|(_, a)| *a == 1)
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>(),
        ["z"]
    );
    assert!(
        sqlx::query("SELECT role FROM users")
            .fetch_all(&db)
            .await
            .is_err(),
        "the global role is gone"
    );
    assert!(
        sqlx::query(
            "INSERT INTO campaign_members (campaign_id, user_id, role) VALUES (2, 1, 'admin')"
        )
        .execute(&db)
        .await
        .is_err(),
        "admin is not a campaign role"
    );
    assert!(
        sqlx::query(
            "INSERT INTO campaign_members (campaign_id, user_id, role) VALUES (1, 3, 'validator')"
        )
        .execute(&db)
        .await
        .is_err(),
        "one role per person and campaign"
    );
    // The append-only guard is back.
    assert!(
        sqlx::query("UPDATE decisions SET verdict = 'valid'")
            .execute(&db)
            .await
            .is_err()
    );
}
