//! A SQLite connection as a [`Tx`]: rusqlite, called in place (on the writer's thread
//! for the writer, on the reading request's thread for a reader), every statement
//! prepared once per connection (`prepare_cached`) and its parameters bound by name. Its
//! futures never wait: the writer polls each job once.

use crate::error::{Error, Result};
use crate::store::db::{Arg, Cell, Col, Dialect, FromRow, Row, Sql, Tx, Value, first_line};
use rusqlite::types::ValueRef;

/// A connection (the writer's or a reader's), and the statements its current job or
/// read has sent.
pub(crate) struct Conn {
    pub(crate) db: rusqlite::Connection,
    pub(crate) statements: u64,
}

/// Whether SQLite said it cannot write (a full disk, an I/O error).
pub(crate) fn cannot_write(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if crate::error::cannot_write(Some(&f.extended_code.to_string())))
}

/// A rusqlite error as the store's: a full disk is unavailable, a unique violation a
/// conflict, anything else internal.
pub(crate) fn error(e: rusqlite::Error) -> Error {
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        if cannot_write(&e) {
            tracing::error!(error = %e, "the database cannot write");
            return Error::Unavailable(
                "the database cannot write right now (the disk may be full); nothing was stored: try again later"
                    .into(),
            );
        }
        if f.code == rusqlite::ErrorCode::ConstraintViolation
            && matches!(
                f.extended_code,
                rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
            )
        {
            return Error::Conflict(
                "another request stored the same thing at the same moment; reload and try again"
                    .into(),
            );
        }
    }
    Error::fault("database", e)
}

/// Binds `args` to a prepared statement: each by its name (`:name`), or by its place
/// (`$1`, `$2`, ...); every parameter of the statement must be bound, once.
fn bind(st: &mut rusqlite::CachedStatement<'_>, sql: &str, args: &[Arg<'_>]) -> Result<()> {
    let mut name = String::with_capacity(24);
    for (i, a) in args.iter().enumerate() {
        name.clear();
        match a.name {
            Some(n) => {
                name.push(':');
                name.push_str(n);
            }
            None => {
                name.push('$');
                name.push_str(&(i + 1).to_string());
            }
        }
        let index = st.parameter_index(&name).map_err(error)?.ok_or_else(|| {
            Error::Internal(format!(
                "value for `{name}`, which the statement does not have: {}",
                first_line(sql)
            ))
        })?;
        match a.value {
            Value::Int(v) => st.raw_bind_parameter(index, v),
            Value::Real(v) => st.raw_bind_parameter(index, v),
            Value::Text(v) => st.raw_bind_parameter(index, v),
            Value::Bool(v) => st.raw_bind_parameter(index, v),
        }
        .map_err(error)?;
    }
    if args.len() != st.parameter_count() {
        return Err(Error::Internal(format!(
            "{} values for {} parameters: {}",
            args.len(),
            st.parameter_count(),
            first_line(sql)
        )));
    }
    Ok(())
}

/// A row of a statement. rusqlite finds a column by name by asking SQLite for
/// every column's name and comparing it without case, for each value read (a verdict's
/// load reads some twenty); the statements name their columns in the order their rows
/// are read, so the column after the last one found is tried first.
struct RusqliteRow<'r, 's> {
    row: &'r rusqlite::Row<'s>,
    next: std::cell::Cell<usize>,
}

impl<'r, 's> RusqliteRow<'r, 's> {
    fn new(row: &'r rusqlite::Row<'s>) -> Self {
        RusqliteRow {
            row,
            next: std::cell::Cell::new(0),
        }
    }

    /// The index of the column named exactly `name`, if there is one.
    fn index_of(&self, name: &str) -> Option<usize> {
        let st = self.row.as_ref();
        let n = st.column_count();
        let first = self.next.get();
        let found = (first..n)
            .chain(0..first.min(n))
            .find(|&i| st.column_name(i).is_ok_and(|c| c == name))?;
        self.next.set(found + 1);
        Some(found)
    }
}

impl Row for RusqliteRow<'_, '_> {
    fn cell(&self, col: Col<'_>) -> Result<Cell> {
        let v = match col {
            // rusqlite's own search (any case) stays for a name spelt otherwise.
            Col::Name(n) => match self.index_of(n) {
                Some(i) => self.row.get_ref(i),
                None => self.row.get_ref(n),
            },
            Col::Index(i) => self.row.get_ref(i),
        }
        .map_err(error)?;
        Ok(match v {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(i) => Cell::Int(i),
            ValueRef::Real(r) => Cell::Real(r),
            ValueRef::Text(t) => Cell::Text(
                std::str::from_utf8(t)
                    .map_err(|_| Error::Internal(format!("{col}: text that is not UTF-8")))?
                    .to_string(),
            ),
            ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
        })
    }
}

impl Conn {
    fn rows<R: FromRow>(
        &mut self,
        text: &str,
        args: &[Arg<'_>],
        first_only: bool,
    ) -> Result<Vec<R>> {
        self.statements += 1;
        let mut st = self.db.prepare_cached(text).map_err(error)?;
        bind(&mut st, text, args)?;
        let mut rows = st.raw_query();
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(error)? {
            out.push(R::from_row(&RusqliteRow::new(r))?);
            if first_only {
                break;
            }
        }
        Ok(out)
    }
}

impl Tx for Conn {
    const DIALECT: Dialect = Dialect::Sqlite;

    async fn exec(&mut self, sql: Sql, args: &[Arg<'_>]) -> Result<u64> {
        let text = sql.sqlite;
        self.statements += 1;
        let mut st = self.db.prepare_cached(text).map_err(error)?;
        bind(&mut st, text, args)?;
        let changed = st.raw_execute().map_err(error)?;
        Ok(u64::try_from(changed).unwrap_or(u64::MAX))
    }

    async fn fetch<R: FromRow>(&mut self, sql: Sql, args: &[Arg<'_>]) -> Result<Vec<R>> {
        self.rows(sql.sqlite, args, false)
    }

    async fn insert_id(&mut self, sql: Sql, args: &[Arg<'_>]) -> Result<i64> {
        if self.exec(sql, args).await? != 1 {
            return Err(Error::Internal(format!(
                "an insert of one row wrote another number: {}",
                first_line(sql.sqlite)
            )));
        }
        Ok(self.db.last_insert_rowid())
    }

    async fn fetch_opt<R: FromRow>(&mut self, sql: Sql, args: &[Arg<'_>]) -> Result<Option<R>> {
        Ok(self.rows(sql.sqlite, args, true)?.into_iter().next())
    }

    async fn insert_rows<R: FromRow>(
        &mut self,
        insert: &'static str,
        returning: &'static str,
        rows: &[Vec<Value<'_>>],
    ) -> Result<Vec<R>> {
        let mut out = Vec::with_capacity(rows.len());
        let Some(cols) = rows.first().map(Vec::len) else {
            return Ok(out);
        };
        let text = format!(
            "{insert} VALUES {} RETURNING {returning}",
            crate::store::db::values(1, cols, 1)
        );
        let mut st = self.db.prepare_cached(&text).map_err(error)?;
        let mut args: Vec<Arg<'_>> = Vec::with_capacity(cols);
        for row in rows {
            args.clear();
            args.extend(row.iter().map(|v| Arg::at(*v)));
            bind(&mut st, &text, &args)?;
            self.statements += 1;
            let mut returned = st.raw_query();
            while let Some(r) = returned.next().map_err(error)? {
                out.push(R::from_row(&RusqliteRow::new(r))?);
            }
        }
        Ok(out)
    }

    async fn fetch_built<R: FromRow>(&mut self, text: &str, args: &[Value<'_>]) -> Result<Vec<R>> {
        let args: Vec<Arg<'_>> = args.iter().map(|v| Arg::at(*v)).collect();
        self.rows(text, &args, false)
    }

    async fn cells(&mut self, text: &str) -> Result<Vec<Vec<Cell>>> {
        self.statements += 1;
        let mut st = self.db.prepare(text).map_err(error)?;
        let n = st.column_count();
        let mut rows = st.raw_query();
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(error)? {
            let row = RusqliteRow::new(r);
            out.push(
                (0..n)
                    .map(|i| row.cell(Col::Index(i)))
                    .collect::<Result<_>>()?,
            );
        }
        Ok(out)
    }
}
