//! One way to run SQL, whichever the database and the driver: the [`Tx`] trait that every
//! write is written against once (`store::areas`), implemented by each backend's
//! connection (SQLite's writer through rusqlite, PostgreSQL through sqlx, and SQLite's
//! read connections through sqlx, so that a lookup that writes also need is written
//! once too).
//!
//! Parameters are named (`:campaign`), from one list made by [`named!`] (or a type's
//! `args()`), so that no statement binds a long chain of positional values that one
//! slip would misplace. (Multi-row inserts, [`Tx::insert_rows`], take their rows' values
//! in column order.)
//! Each backend checks that every parameter of the statement is given and every value
//! given is used: a misspelt name is an error on both backends, never a silent NULL.
//! Rows are read by column name into types declared with [`row!`], once for every
//! backend.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

/// Which database a connection talks to, for the few statements that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// A statement's text for each database: the same text, or (`locked!`) one that locks the
/// rows it reads on PostgreSQL, where writes run side by side; SQLite's one writer holds
/// the whole database already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sql {
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

impl Sql {
    pub(crate) const fn same(text: &'static str) -> Sql {
        Sql {
            sqlite: text,
            postgres: text,
        }
    }

    pub(crate) fn text(self, d: Dialect) -> &'static str {
        match d {
            Dialect::Sqlite => self.sqlite,
            Dialect::Postgres => self.postgres,
        }
    }
}

/// A statement that is the same on every backend: `sql!("SELECT ...")`.
macro_rules! sql {
    ($text:expr) => {
        $crate::store::db::Sql::same($text)
    };
}
pub(crate) use sql;

/// The condition that an item of table alias `$t` is retained (`Outcome::is_retained`),
/// written once for every statement that needs it: `retained!("p")`.
macro_rules! retained {
    ($t:literal) => {
        concat!(
            $t,
            ".outcome IN ('both_pass', 'split_accepted', 'by_sample')"
        )
    };
}
pub(crate) use retained;

/// 1 when an item (alias `i`, its clip's item `p`) is open to review: a clip, a question
/// of no clip, or a question of a retained clip; else 0.
macro_rules! question_open {
    () => {
        concat!(
            "CASE WHEN i.stage = 1 OR i.parent_item_id IS NULL OR ",
            $crate::store::db::retained!("p"),
            " THEN 1 ELSE 0 END"
        )
    };
}
pub(crate) use question_open;

/// A `SELECT` that locks the rows of table alias `$t` until the write ends, on
/// PostgreSQL (`FOR UPDATE OF t`).
macro_rules! locked {
    ($text:expr, $t:literal) => {
        $crate::store::db::Sql {
            sqlite: $text,
            postgres: concat!($text, " FOR UPDATE OF ", $t),
        }
    };
}
pub(crate) use locked;

/// A value bound to a statement, with its type even when it is NULL (PostgreSQL types
/// every parameter).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value<'a> {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<&'a str>),
    Bool(bool),
}

impl From<i64> for Value<'_> {
    fn from(v: i64) -> Self {
        Value::Int(Some(v))
    }
}
impl From<Option<i64>> for Value<'_> {
    fn from(v: Option<i64>) -> Self {
        Value::Int(v)
    }
}
impl From<f64> for Value<'_> {
    fn from(v: f64) -> Self {
        Value::Real(Some(v))
    }
}
impl From<Option<f64>> for Value<'_> {
    fn from(v: Option<f64>) -> Self {
        Value::Real(v)
    }
}
impl From<bool> for Value<'_> {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl<'a> From<&'a str> for Value<'a> {
    fn from(v: &'a str) -> Self {
        Value::Text(Some(v))
    }
}
impl<'a> From<&'a String> for Value<'a> {
    fn from(v: &'a String) -> Self {
        Value::Text(Some(v.as_str()))
    }
}
impl<'a> From<Option<&'a str>> for Value<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Value::Text(v)
    }
}
impl<'a> From<&'a Option<String>> for Value<'a> {
    fn from(v: &'a Option<String>) -> Self {
        Value::Text(v.as_deref())
    }
}

/// One parameter: `:name` in the statement, or (no name) the next `$n`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Arg<'a> {
    pub name: Option<&'static str>,
    pub value: Value<'a>,
}

impl<'a> Arg<'a> {
    pub(crate) fn named(name: &'static str, value: impl Into<Value<'a>>) -> Arg<'a> {
        Arg {
            name: Some(name),
            value: value.into(),
        }
    }

    pub(crate) fn at(value: impl Into<Value<'a>>) -> Arg<'a> {
        Arg {
            name: None,
            value: value.into(),
        }
    }
}

/// Named parameters: `named! { campaign: c.id, key }` for `:campaign` and `:key` (a
/// name alone binds the variable of that name).
macro_rules! named {
    (@acc [$($out:expr,)*]) => {
        &[$($out),*]
    };
    (@acc [$($out:expr,)*] $name:ident : $value:expr $(, $($rest:tt)*)?) => {
        $crate::store::db::named!(@acc
            [$($out,)* $crate::store::db::Arg::named(stringify!($name), $value),]
            $($($rest)*)?)
    };
    (@acc [$($out:expr,)*] $name:ident $(, $($rest:tt)*)?) => {
        $crate::store::db::named!(@acc
            [$($out,)* $crate::store::db::Arg::named(stringify!($name), $name),]
            $($($rest)*)?)
    };
    ($($t:tt)*) => {
        $crate::store::db::named!(@acc [] $($t)*)
    };
}
pub(crate) use named;

/// A value read from a row, its type as the database gave it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bool(bool),
    Blob(Vec<u8>),
}

/// Where a value is in a row.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Col<'a> {
    Name(&'a str),
    Index(usize),
}

impl std::fmt::Display for Col<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Col::Name(n) => write!(f, "column `{n}`"),
            Col::Index(i) => write!(f, "column {i}"),
        }
    }
}

/// A row of a result, whichever the driver.
pub(crate) trait Row {
    fn cell(&self, col: Col<'_>) -> Result<Cell>;

    fn get<T: Column>(&self, name: &str) -> Result<T> {
        T::from_cell(self.cell(Col::Name(name))?, Col::Name(name))
    }

    fn at<T: Column>(&self, index: usize) -> Result<T> {
        T::from_cell(self.cell(Col::Index(index))?, Col::Index(index))
    }
}

fn wrong(col: Col<'_>, want: &str, got: &Cell) -> Error {
    Error::Internal(format!("{col}: expected {want}, the database gave {got:?}"))
}

/// A type a column can be read as.
pub(crate) trait Column: Sized {
    fn from_cell(c: Cell, col: Col<'_>) -> Result<Self>;
}

impl Column for i64 {
    fn from_cell(c: Cell, col: Col<'_>) -> Result<Self> {
        match c {
            Cell::Int(v) => Ok(v),
            Cell::Bool(b) => Ok(i64::from(b)),
            other => Err(wrong(col, "an integer", &other)),
        }
    }
}
impl Column for f64 {
    fn from_cell(c: Cell, col: Col<'_>) -> Result<Self> {
        match c {
            Cell::Real(v) => Ok(v),
            // SQLite gives a REAL column holding a whole number as an integer.
            Cell::Int(v) => Ok(v as f64),
            other => Err(wrong(col, "a number", &other)),
        }
    }
}
impl Column for bool {
    fn from_cell(c: Cell, col: Col<'_>) -> Result<Self> {
        match c {
            Cell::Bool(b) => Ok(b),
            Cell::Int(v) => Ok(v != 0),
            other => Err(wrong(col, "a truth value", &other)),
        }
    }
}
impl Column for String {
    fn from_cell(c: Cell, col: Col<'_>) -> Result<Self> {
        match c {
            Cell::Text(s) => Ok(s),
            other => Err(wrong(col, "text", &other)),
        }
    }
}
impl<T: Column> Column for Option<T> {
    fn from_cell(c: Cell, col: Col<'_>) -> Result<Self> {
        match c {
            Cell::Null => Ok(None),
            other => T::from_cell(other, col).map(Some),
        }
    }
}

/// A type a whole row can be read as: by column name ([`row!`]) or, for tuples, by
/// position.
pub(crate) trait FromRow: Sized {
    fn from_row(r: &impl Row) -> Result<Self>;
}

macro_rules! tuple_from_row {
    ($($t:ident $i:tt),+) => {
        impl<$($t: Column),+> FromRow for ($($t,)+) {
            fn from_row(r: &impl Row) -> Result<Self> {
                Ok(($(r.at::<$t>($i)?,)+))
            }
        }
    };
}
tuple_from_row!(A 0);
tuple_from_row!(A 0, B 1);
tuple_from_row!(A 0, B 1, C 2);
tuple_from_row!(A 0, B 1, C 2, D 3);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

/// A struct read from a row by column name, the same on every backend:
/// `row! { pub(crate) struct X { pub id: i64, pub name: String } }`.
macro_rules! row {
    ($(#[$m:meta])* $vis:vis struct $name:ident {
        $($(#[$fm:meta])* $fvis:vis $field:ident : $ty:ty),* $(,)?
    }) => {
        $(#[$m])*
        $vis struct $name { $($(#[$fm])* $fvis $field: $ty),* }
        impl $crate::store::db::FromRow for $name {
            fn from_row(r: &impl $crate::store::db::Row) -> $crate::error::Result<Self> {
                Ok($name { $($field: r.get::<$ty>(stringify!($field))?),* })
            }
        }
    };
}
pub(crate) use row;

/// A connection inside a transaction (or a read connection), whichever the backend:
/// what every write is written against.
pub(crate) trait Tx {
    /// The database, for the statements that differ.
    const DIALECT: Dialect;

    /// Runs a statement; returns the rows it changed.
    async fn exec(&mut self, sql: Sql, args: &[Arg<'_>]) -> Result<u64>;

    /// Every row of a statement's result.
    async fn fetch<R: FromRow>(&mut self, sql: Sql, args: &[Arg<'_>]) -> Result<Vec<R>>;

    /// The first row of a statement's result, if any.
    async fn fetch_opt<R: FromRow>(&mut self, sql: Sql, args: &[Arg<'_>]) -> Result<Option<R>>;

    /// Inserts many rows: `insert` is the statement up to `VALUES`, each row gives one
    /// value per column, and `returning` the columns each inserted row gives back
    /// (their order is not the rows' order: read a key back with the id). SQLite runs
    /// one prepared statement per row; PostgreSQL multi-row statements.
    async fn insert_rows<R: FromRow>(
        &mut self,
        insert: &'static str,
        returning: &'static str,
        rows: &[Vec<Value<'_>>],
    ) -> Result<Vec<R>>;

    /// Every row of a statement made at run time, without parameters, as cells: for
    /// the upkeep that walks every table (the dump, the search for control
    /// characters), whose names come from the database's own catalogue, never from input.
    async fn cells(&mut self, text: &str) -> Result<Vec<Vec<Cell>>>;

    /// Every row of a statement made at run time, its parameters `$1`, `$2`, ... bound
    /// to `args` in order: the audit trail's, which holds only the conditions a filter
    /// gives (so that the planner takes the indexes they name).
    async fn fetch_built<R: FromRow>(&mut self, text: &str, args: &[Value<'_>]) -> Result<Vec<R>>;

    /// The one row of a statement's result (an error without one).
    async fn fetch_one<R: FromRow>(&mut self, sql: Sql, args: &[Arg<'_>]) -> Result<R> {
        self.fetch_opt(sql, args).await?.ok_or_else(|| {
            Error::Internal(format!(
                "no row from: {}",
                first_line(sql.text(Self::DIALECT))
            ))
        })
    }

    /// The first column of the one row of a statement's result.
    async fn scalar<T: Column>(&mut self, sql: Sql, args: &[Arg<'_>]) -> Result<T> {
        Ok(self.fetch_one::<(T,)>(sql, args).await?.0)
    }

    /// Runs an INSERT of one row and returns the new row's `id`: `sql.sqlite` is the
    /// INSERT alone (SQLite gives the id without a statement: a `RETURNING` clause costs
    /// it a temporary table for each row), `sql.postgres` the same with `RETURNING id`.
    async fn insert_id(&mut self, sql: Sql, args: &[Arg<'_>]) -> Result<i64> {
        self.scalar(sql, args).await
    }

    /// The first column of the first row, if any.
    async fn scalar_opt<T: Column>(&mut self, sql: Sql, args: &[Arg<'_>]) -> Result<Option<T>> {
        Ok(self.fetch_opt::<(T,)>(sql, args).await?.map(|r| r.0))
    }
}

/// The start of a statement, to name it in an error.
pub(crate) fn first_line(sql: &str) -> String {
    let one: String = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    one.chars().take(80).collect()
}

/// A statement with its `:name` parameters turned into `$1`, `$2`, ... (in order of
/// first appearance), as sqlx's drivers bind them, and the names in that order.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Numbered {
    pub text: Arc<str>,
    pub names: Vec<&'static str>,
}

/// `:name` -> `$k`, outside quotes and `::` casts. A statement without names is kept
/// as it is.
pub(crate) fn number_names(sql: &'static str) -> Numbered {
    let b = sql.as_bytes();
    let mut text = String::with_capacity(sql.len());
    let mut names: Vec<&'static str> = Vec::new();
    let mut i = 0;
    let mut quoted = false;
    let mut start = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\'' {
            quoted = !quoted;
        } else if !quoted
            && c == b':'
            && b.get(i + 1)
                .is_some_and(|n| n.is_ascii_alphabetic() || *n == b'_')
            && (i == 0 || b[i - 1] != b':')
        {
            let mut j = i + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            let name = &sql[i + 1..j];
            let k = match names.iter().position(|n| *n == name) {
                Some(k) => k,
                None => {
                    names.push(name);
                    names.len() - 1
                }
            };
            text.push_str(&sql[start..i]);
            text.push('$');
            text.push_str(&(k + 1).to_string());
            start = j;
            i = j;
            continue;
        }
        i += 1;
    }
    text.push_str(&sql[start..]);
    Numbered {
        text: text.into(),
        names,
    }
}

/// Statements numbered so far, by their text's address and length (every statement is
/// a `&'static str`: a fixed set).
type NumberedCache = RwLock<HashMap<(usize, usize), Arc<Numbered>>>;

/// [`number_names`], done once per statement.
pub(crate) fn numbered(sql: &'static str) -> Arc<Numbered> {
    static DONE: OnceLock<NumberedCache> = OnceLock::new();
    let done = DONE.get_or_init(Default::default);
    let key = (sql.as_ptr() as usize, sql.len());
    if let Ok(map) = done.read()
        && let Some(n) = map.get(&key)
    {
        return n.clone();
    }
    let n = Arc::new(number_names(sql));
    if let Ok(mut map) = done.write() {
        map.insert(key, n.clone());
    }
    n
}

/// The values of `args` in the order of `$1`, `$2`, ...: by name for a statement with
/// names (each name given once, each given value used), else as given.
pub(crate) fn in_order<'v, 'a>(
    sql: &str,
    names: &[&'static str],
    args: &'v [Arg<'a>],
) -> Result<Vec<&'v Value<'a>>> {
    if names.is_empty() {
        if let Some(a) = args.iter().find(|a| a.name.is_some()) {
            return Err(Error::Internal(format!(
                "parameter `:{}` given to a statement without names: {}",
                a.name.unwrap_or_default(),
                first_line(sql)
            )));
        }
        return Ok(args.iter().map(|a| &a.value).collect());
    }
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let a = args.iter().find(|a| a.name == Some(n)).ok_or_else(|| {
            Error::Internal(format!("no value for `:{n}` in: {}", first_line(sql)))
        })?;
        out.push(&a.value);
    }
    if let Some(a) = args
        .iter()
        .find(|a| !a.name.is_some_and(|n| names.contains(&n)))
    {
        return Err(Error::Internal(format!(
            "value {:?} for a parameter the statement does not have: {}",
            a.name,
            first_line(sql)
        )));
    }
    Ok(out)
}

/// `($1, $2, $3), ($4, $5, $6), ...`: `rows` rows of `cols` parameters from `first`.
pub(crate) fn values(first: usize, cols: usize, rows: usize) -> String {
    let mut s = String::with_capacity(rows * cols * 5);
    for r in 0..rows {
        if r > 0 {
            s.push_str(", ");
        }
        s.push('(');
        for k in 0..cols {
            if k > 0 {
                s.push_str(", ");
            }
            s.push('$');
            s.push_str(&(first + r * cols + k).to_string());
        }
        s.push(')');
    }
    s
}

/// [`Tx`] for a sqlx connection (`$conn`, of database `$db`), its rows read by
/// `$cell`: PostgreSQL's connections, and SQLite's read connections. Each statement
/// counts one (`store::count`).
macro_rules! sqlx_tx {
    ($conn:ty, $db:ty, $dialect:expr, $cell:path, $max_params:expr) => {
        impl $crate::store::db::Tx for $conn {
            const DIALECT: $crate::store::db::Dialect = $dialect;

            async fn exec(
                &mut self,
                sql: $crate::store::db::Sql,
                args: &[$crate::store::db::Arg<'_>],
            ) -> $crate::error::Result<u64> {
                let query = $crate::store::db::sqlx_tx!(@query $db, $dialect, sql, args);
                $crate::store::count::add(1);
                Ok(query.execute(&mut *self).await?.rows_affected())
            }

            async fn fetch<R: $crate::store::db::FromRow>(
                &mut self,
                sql: $crate::store::db::Sql,
                args: &[$crate::store::db::Arg<'_>],
            ) -> $crate::error::Result<Vec<R>> {
                let query = $crate::store::db::sqlx_tx!(@query $db, $dialect, sql, args);
                $crate::store::count::add(1);
                $crate::store::db::sqlx_tx!(@rows query, self)
            }

            async fn fetch_opt<R: $crate::store::db::FromRow>(
                &mut self,
                sql: $crate::store::db::Sql,
                args: &[$crate::store::db::Arg<'_>],
            ) -> $crate::error::Result<Option<R>> {
                let query = $crate::store::db::sqlx_tx!(@query $db, $dialect, sql, args);
                $crate::store::count::add(1);
                match query.fetch_optional(&mut *self).await? {
                    Some(r) => R::from_row(&SqlxRow(&r)).map(Some),
                    None => Ok(None),
                }
            }

            async fn insert_rows<R: $crate::store::db::FromRow>(
                &mut self,
                insert: &'static str,
                returning: &'static str,
                rows: &[Vec<$crate::store::db::Value<'_>>],
            ) -> $crate::error::Result<Vec<R>> {
                let mut out = Vec::with_capacity(rows.len());
                let Some(cols) = rows.first().map(Vec::len) else {
                    return Ok(out);
                };
                let per = ($max_params / cols.max(1)).max(1);
                for chunk in rows.chunks(per) {
                    let text = format!(
                        "{insert} VALUES {} RETURNING {returning}",
                        $crate::store::db::values(1, cols, chunk.len())
                    );
                    let mut query = sqlx::query(sqlx::AssertSqlSafe(text));
                    for row in chunk {
                        if row.len() != cols {
                            return Err($crate::error::Error::Internal(format!(
                                "a row of {} values for {cols} columns: {insert}",
                                row.len()
                            )));
                        }
                        for v in row {
                            query = $crate::store::db::sqlx_tx!(@bind query, v);
                        }
                    }
                    $crate::store::count::add(1);
                    for r in query.fetch_all(&mut *self).await? {
                        out.push(R::from_row(&SqlxRow(&r))?);
                    }
                }
                Ok(out)
            }

            async fn fetch_built<R: $crate::store::db::FromRow>(
                &mut self,
                text: &str,
                args: &[$crate::store::db::Value<'_>],
            ) -> $crate::error::Result<Vec<R>> {
                let mut query = sqlx::query::<$db>(sqlx::AssertSqlSafe(text.to_string()));
                for v in args {
                    query = $crate::store::db::sqlx_tx!(@bind query, v);
                }
                $crate::store::count::add(1);
                $crate::store::db::sqlx_tx!(@rows query, self)
            }

            async fn cells(
                &mut self,
                text: &str,
            ) -> $crate::error::Result<Vec<Vec<$crate::store::db::Cell>>> {
                use sqlx::Row as _;
                $crate::store::count::add(1);
                let rows = sqlx::query::<$db>(sqlx::AssertSqlSafe(text.to_string()))
                    .fetch_all(&mut *self)
                    .await?;
                rows.iter()
                    .map(|r| {
                        (0..r.columns().len())
                            .map(|i| $cell(r, $crate::store::db::Col::Index(i)))
                            .collect()
                    })
                    .collect()
            }
        }

        /// A sqlx row as the store reads rows.
        struct SqlxRow<'r>(&'r <$db as sqlx::Database>::Row);

        impl $crate::store::db::Row for SqlxRow<'_> {
            fn cell(
                &self,
                col: $crate::store::db::Col<'_>,
            ) -> $crate::error::Result<$crate::store::db::Cell> {
                $cell(self.0, col)
            }
        }
    };
    (@query $db:ty, $dialect:expr, $sql:ident, $args:ident) => {{
        let text = $sql.text($dialect);
        let numbered = $crate::store::db::numbered(text);
        let values = $crate::store::db::in_order(text, &numbered.names, $args)?;
        let mut query = if numbered.names.is_empty() {
            sqlx::query::<$db>(text)
        } else {
            sqlx::query::<$db>(sqlx::AssertSqlSafe(numbered.text.clone()))
        };
        for v in values {
            query = $crate::store::db::sqlx_tx!(@bind query, v);
        }
        query
    }};
    // Every row of `$query`, each read as it arrives: no second copy of a long result
    // is held.
    (@rows $query:ident, $conn:ident) => {{
        use futures_util::TryStreamExt as _;
        let mut rows = $query.fetch(&mut *$conn);
        let mut out = Vec::new();
        while let Some(r) = rows.try_next().await? {
            out.push(R::from_row(&SqlxRow(&r))?);
        }
        Ok(out)
    }};
    (@bind $query:ident, $v:expr) => {
        match *$v {
            $crate::store::db::Value::Int(x) => $query.bind(x),
            $crate::store::db::Value::Real(x) => $query.bind(x),
            $crate::store::db::Value::Text(x) => $query.bind(x),
            $crate::store::db::Value::Bool(x) => $query.bind(x),
        }
    };
}
pub(crate) use sqlx_tx;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retained_condition_names_the_retained_outcomes_and_no_other() {
        use crate::domain::Outcome;
        let text = retained!("p");
        let listed: Vec<&str> = text
            .split(['(', ')'])
            .nth(1)
            .unwrap_or_default()
            .split(", ")
            .map(|s| s.trim_matches('\''))
            .collect();
        let retained: Vec<&str> = Outcome::ALL
            .into_iter()
            .filter(|o| o.is_retained())
            .map(Outcome::as_str)
            .collect();
        assert_eq!(listed, retained);
        assert!(text.starts_with("p.outcome IN ("));
    }

    #[test]
    fn names_become_numbers_in_order_of_first_use() {
        let n = number_names(
            "UPDATE t SET a = :a, b = :b::BIGINT WHERE id = :id AND a = :a AND c = 'x:y'",
        );
        assert_eq!(
            &*n.text,
            "UPDATE t SET a = $1, b = $2::BIGINT WHERE id = $3 AND a = $1 AND c = 'x:y'"
        );
        assert_eq!(n.names, ["a", "b", "id"]);
        assert_eq!(number_names("SELECT $1").names, Vec::<&str>::new());
    }

    #[test]
    fn every_name_needs_a_value_and_every_value_a_name() {
        let given = named! { b: 2i64, a: 1i64 };
        let ok = in_order("x", &["a", "b"], given).unwrap();
        assert_eq!(ok, [&Value::Int(Some(1)), &Value::Int(Some(2))]);
        assert!(in_order("x", &["a", "b"], named! { a: 1i64 }).is_err());
        assert!(in_order("x", &["a"], named! { a: 1i64, c: 3i64 }).is_err());
        assert!(in_order("x", &[], named! { a: 1i64 }).is_err());
        assert_eq!(in_order("x", &[], &[Arg::at(5i64)]).unwrap().len(), 1);
    }
}
