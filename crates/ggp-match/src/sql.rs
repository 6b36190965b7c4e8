//! One SQL interface over the two databases the match store runs on: SQLite (`rusqlite`, the
//! default, a file) and PostgreSQL (the `postgres` crate, for several machines sharing one
//! database). Every statement of the project is written once, in the SQL both understand, and
//! sent to either as written: `$1`-style parameters (PostgreSQL's own; SQLite reads `$1` as a
//! parameter named `$1`, and each is bound by its name, never by its position: SQLite numbers
//! named parameters in the order they first appear), `RETURNING id` rather than the last row
//! id, `lower(x) = lower($1)` rather than SQLite's `COLLATE NOCASE`, no `json_each`. The few
//! statements that cannot be written once are chosen by [`Conn::pick`], both texts in the code.
//!
//! Parameters carry their type ([`Value`]; a NULL knows what it is a NULL of), so PostgreSQL
//! never has to guess one (`$1 IS NULL` works on both) and every statement is sent with
//! `query_typed`, without a prepare round trip. The schema is the one thing written for each
//! database apart: migrations as SQL files per database ([`crate::Schema`]).

use std::cell::RefCell;
use std::fmt;

/// Which database a connection talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// The type of a value, which a NULL keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Real,
    Text,
    Bool,
}

/// A parameter or a column's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null(Kind),
    Int(i64),
    Real(f64),
    Text(String),
    Bool(bool),
}

/// What a statement failed with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A query for one row found none.
    NoRows,
    /// A uniqueness, key or check constraint refused a write.
    Constraint,
    /// Another process held a lock for too long (SQLite's busy timeout).
    Busy,
    /// The file or server cannot be opened or reached.
    Open,
    /// The file is not a database.
    NotADatabase,
    /// A column's value is not of the type asked for.
    Type,
    Other,
}

/// Why migrations could not be run.
#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    #[error(transparent)]
    Refinery(#[from] refinery::Error),
    #[error("the PostgreSQL connection is closed")]
    Closed,
}

/// A database error: what kind, and the database's own words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

fn error(kind: ErrorKind, message: impl Into<String>) -> Error {
    Error {
        kind,
        message: message.into(),
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Error {
        use rusqlite::ErrorCode;
        let kind = match &e {
            rusqlite::Error::QueryReturnedNoRows => ErrorKind::NoRows,
            rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::IntegralValueOutOfRange(..) => ErrorKind::Type,
            _ => match e.sqlite_error_code() {
                Some(ErrorCode::ConstraintViolation) => ErrorKind::Constraint,
                Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => ErrorKind::Busy,
                Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied | ErrorCode::ReadOnly) => {
                    ErrorKind::Open
                }
                Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
                    ErrorKind::NotADatabase
                }
                _ => ErrorKind::Other,
            },
        };
        error(kind, e.to_string())
    }
}

impl From<postgres::Error> for Error {
    fn from(e: postgres::Error) -> Error {
        let kind = match e.code() {
            Some(code) if code.code().starts_with("23") => ErrorKind::Constraint,
            Some(code) if code.code() == "55P03" => ErrorKind::Busy,
            Some(code) if code.code().starts_with("08") || code.code().starts_with("28") => {
                ErrorKind::Open
            }
            Some(_) => ErrorKind::Other,
            None if e.is_closed() => ErrorKind::Open,
            None => ErrorKind::Other,
        };
        // PostgreSQL's own message (and detail) says more than the error's Display.
        let message = match e.as_db_error() {
            Some(db) => match db.detail() {
                Some(detail) => format!("{}: {} ({detail})", db.severity(), db.message()),
                None => format!("{}: {}", db.severity(), db.message()),
            },
            None => {
                // The cause (a refused connection, a name that does not resolve) says more.
                let mut message = e.to_string();
                let mut source = std::error::Error::source(&e);
                while let Some(cause) = source {
                    let text = cause.to_string();
                    if !message.contains(&text) {
                        message.push_str(&format!(": {text}"));
                    }
                    source = cause.source();
                }
                message
            }
        };
        error(kind, message)
    }
}

/// A Rust value that can be a parameter.
pub trait ToValue {
    fn to_value(&self) -> Value;
}

/// The kind of a type's NULL.
pub trait Typed {
    const KIND: Kind;
}

macro_rules! int_values {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn to_value(&self) -> Value {
                Value::Int(*self as i64)
            }
        }
        impl Typed for $t {
            const KIND: Kind = Kind::Int;
        }
    )*};
}
int_values!(i64, i32, u32, u16, u8, usize);

impl ToValue for u64 {
    fn to_value(&self) -> Value {
        Value::Int(i64::try_from(*self).unwrap_or(i64::MAX))
    }
}
impl Typed for u64 {
    const KIND: Kind = Kind::Int;
}
impl ToValue for f64 {
    fn to_value(&self) -> Value {
        Value::Real(*self)
    }
}
impl Typed for f64 {
    const KIND: Kind = Kind::Real;
}
impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Bool(*self)
    }
}
impl Typed for bool {
    const KIND: Kind = Kind::Bool;
}
impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
}
impl Typed for str {
    const KIND: Kind = Kind::Text;
}
impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
}
impl Typed for String {
    const KIND: Kind = Kind::Text;
}
impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}
impl<T: Typed + ?Sized> Typed for &T {
    const KIND: Kind = T::KIND;
}
impl<T: ToValue + Typed> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        match self {
            Some(v) => v.to_value(),
            None => Value::Null(T::KIND),
        }
    }
}
impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}

/// A statement's parameters: `params![a, b]`, an array of values of one type, or `()`.
pub trait Params {
    fn values(&self) -> Vec<Value>;
}

impl Params for () {
    fn values(&self) -> Vec<Value> {
        Vec::new()
    }
}

impl Params for &[&dyn ToValue] {
    fn values(&self) -> Vec<Value> {
        self.iter().map(|v| v.to_value()).collect()
    }
}

impl<T: ToValue, const N: usize> Params for [T; N] {
    fn values(&self) -> Vec<Value> {
        self.iter().map(ToValue::to_value).collect()
    }
}

/// The parameters of a statement, of any types: `params![id, name, None::<String>]`.
#[macro_export]
macro_rules! params {
    () => { () };
    ($($x:expr),+ $(,)?) => {
        &[$(&$x as &dyn $crate::sql::ToValue),+] as &[&dyn $crate::sql::ToValue]
    };
}
pub use crate::params;

/// A Rust value a column can be read as.
pub trait FromValue: Sized {
    fn from_value(v: &Value) -> Result<Self>;
}

fn type_error(v: &Value, want: &str) -> Error {
    error(
        ErrorKind::Type,
        format!("a column holds {v:?} where {want} was expected"),
    )
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Result<i64> {
        match v {
            Value::Int(n) => Ok(*n),
            Value::Bool(b) => Ok(i64::from(*b)),
            _ => Err(type_error(v, "an integer")),
        }
    }
}

macro_rules! narrow_values {
    ($($t:ty),*) => {$(
        impl FromValue for $t {
            fn from_value(v: &Value) -> Result<$t> {
                let n = i64::from_value(v)?;
                <$t>::try_from(n).map_err(|_| type_error(v, stringify!($t)))
            }
        }
    )*};
}
narrow_values!(i32, u32, u8, u64, usize);

impl FromValue for f64 {
    fn from_value(v: &Value) -> Result<f64> {
        match v {
            Value::Real(x) => Ok(*x),
            Value::Int(n) => Ok(*n as f64),
            _ => Err(type_error(v, "a number")),
        }
    }
}

impl FromValue for bool {
    fn from_value(v: &Value) -> Result<bool> {
        match v {
            Value::Bool(b) => Ok(*b),
            Value::Int(n) => Ok(*n != 0),
            _ => Err(type_error(v, "a truth value")),
        }
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Result<String> {
        match v {
            Value::Text(s) => Ok(s.clone()),
            _ => Err(type_error(v, "text")),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Result<Option<T>> {
        match v {
            Value::Null(_) => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

/// Which column: its index from 0.
pub trait ColumnIndex {
    fn index(self) -> usize;
}

impl ColumnIndex for usize {
    fn index(self) -> usize {
        self
    }
}

/// A row of a result.
#[derive(Clone, Debug)]
pub struct Row {
    values: Vec<Value>,
}

impl Row {
    /// Column `idx` (from 0) as a `T`.
    pub fn get<I: ColumnIndex, T: FromValue>(&self, idx: I) -> Result<T> {
        let idx = idx.index();
        let v = self.values.get(idx).ok_or_else(|| {
            error(
                ErrorKind::Type,
                format!("no column {idx} in a row of {}", self.values.len()),
            )
        })?;
        T::from_value(v)
    }
}

/// `.optional()` on a query for one row: no row is `None`, not an error.
pub trait OptionalExtension<T> {
    fn optional(self) -> Result<Option<T>>;
}

impl<T> OptionalExtension<T> for Result<T> {
    fn optional(self) -> Result<Option<T>> {
        match self {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.kind == ErrorKind::NoRows => Ok(None),
            Err(e) => Err(e),
        }
    }
}

enum Backend {
    Sqlite(rusqlite::Connection),
    /// `None` only while being dropped.
    Postgres(RefCell<Option<postgres::Client>>),
}

/// A connection to either database.
pub struct Conn {
    backend: Backend,
}

/// A statement to run (rusqlite's shape, so that code reads the same on both databases).
pub struct Statement<'c> {
    conn: &'c Conn,
    sql: String,
}

impl Statement<'_> {
    pub fn execute(&mut self, params: impl Params) -> Result<usize> {
        self.conn.execute(&self.sql, params)
    }

    pub fn query_row<T>(
        &mut self,
        params: impl Params,
        f: impl FnOnce(&Row) -> Result<T>,
    ) -> Result<T> {
        self.conn.query_row(&self.sql, params, f)
    }

    /// Every row through `f`, in order (read at once).
    pub fn query_map<T>(
        &mut self,
        params: impl Params,
        f: impl FnMut(&Row) -> Result<T>,
    ) -> Result<std::vec::IntoIter<Result<T>>> {
        let rows = self.conn.query(&self.sql, params)?;
        Ok(rows.iter().map(f).collect::<Vec<_>>().into_iter())
    }
}

impl Conn {
    pub fn sqlite(conn: rusqlite::Connection) -> Conn {
        conn.set_prepared_statement_cache_capacity(256);
        Conn {
            backend: Backend::Sqlite(conn),
        }
    }

    pub fn postgres(client: postgres::Client) -> Conn {
        Conn {
            backend: Backend::Postgres(RefCell::new(Some(client))),
        }
    }

    pub fn dialect(&self) -> Dialect {
        match self.backend {
            Backend::Sqlite(_) => Dialect::Sqlite,
            Backend::Postgres(_) => Dialect::Postgres,
        }
    }

    /// The SQLite connection, if this is one.
    pub fn as_sqlite(&self) -> Option<&rusqlite::Connection> {
        match &self.backend {
            Backend::Sqlite(c) => Some(c),
            Backend::Postgres(_) => None,
        }
    }

    /// Runs refinery's migrations on this connection (with refinery's own driver for each
    /// database).
    pub(crate) fn run_migrations(
        &mut self,
        runner: &refinery::Runner,
    ) -> Result<refinery::Report, MigrationError> {
        Ok(match &mut self.backend {
            Backend::Sqlite(c) => {
                // refinery's transactions take the write lock at once, waiting for another
                // process's (a deferred one that read first could not wait: SQLite fails it).
                c.set_transaction_behavior(rusqlite::TransactionBehavior::Immediate);
                runner.run(c)?
            }
            Backend::Postgres(c) => {
                let client = c.get_mut().as_mut().ok_or(MigrationError::Closed)?;
                outside_runtime(|| runner.run(client))?
            }
        })
    }

    /// `sqlite` on SQLite, `postgres` on PostgreSQL.
    pub fn pick<'a>(&self, sqlite: &'a str, postgres: &'a str) -> &'a str {
        match self.dialect() {
            Dialect::Sqlite => sqlite,
            Dialect::Postgres => postgres,
        }
    }

    pub fn prepare(&self, sql: &str) -> Result<Statement<'_>> {
        Ok(Statement {
            conn: self,
            sql: sql.to_string(),
        })
    }

    pub fn prepare_cached(&self, sql: &str) -> Result<Statement<'_>> {
        self.prepare(sql)
    }

    /// Runs a statement; the number of rows it changed.
    pub fn execute(&self, sql: &str, params: impl Params) -> Result<usize> {
        let values = params.values();
        match &self.backend {
            Backend::Sqlite(c) => {
                let mut st = c.prepare_cached(sql)?;
                bind_by_name(&mut st, &values)?;
                Ok(st.raw_execute()?)
            }
            Backend::Postgres(c) => {
                let owned: Vec<PgParam> = values.iter().map(PgParam::from).collect();
                let params: Vec<(&(dyn postgres::types::ToSql + Sync), postgres::types::Type)> =
                    owned.iter().map(PgParam::as_param).collect();
                let n = with_client(c, |c| c.execute_typed(sql, &params))?;
                Ok(n as usize)
            }
        }
    }

    /// Every row of a query.
    pub fn query(&self, sql: &str, params: impl Params) -> Result<Vec<Row>> {
        let values = params.values();
        match &self.backend {
            Backend::Sqlite(c) => {
                let mut st = c.prepare_cached(sql)?;
                let n = st.column_count();
                bind_by_name(&mut st, &values)?;
                let mut rows = st.raw_query();
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    let mut values = Vec::with_capacity(n);
                    for k in 0..n {
                        values.push(match r.get_ref(k)? {
                            rusqlite::types::ValueRef::Null => Value::Null(Kind::Int),
                            rusqlite::types::ValueRef::Integer(i) => Value::Int(i),
                            rusqlite::types::ValueRef::Real(x) => Value::Real(x),
                            rusqlite::types::ValueRef::Text(t) => {
                                Value::Text(String::from_utf8_lossy(t).into_owned())
                            }
                            rusqlite::types::ValueRef::Blob(b) => {
                                Value::Text(String::from_utf8_lossy(b).into_owned())
                            }
                        });
                    }
                    out.push(Row { values });
                }
                Ok(out)
            }
            Backend::Postgres(c) => {
                let owned: Vec<PgParam> = values.iter().map(PgParam::from).collect();
                let params: Vec<(&(dyn postgres::types::ToSql + Sync), postgres::types::Type)> =
                    owned.iter().map(PgParam::as_param).collect();
                let rows = with_client(c, |c| c.query_typed(sql, &params))?;
                rows.iter().map(pg_row).collect()
            }
        }
    }

    /// The first row of a query through `f`; [`ErrorKind::NoRows`] if there is none.
    pub fn query_row<T>(
        &self,
        sql: &str,
        params: impl Params,
        f: impl FnOnce(&Row) -> Result<T>,
    ) -> Result<T> {
        let rows = self.query(sql, params)?;
        match rows.first() {
            Some(r) => f(r),
            None => Err(error(ErrorKind::NoRows, "the query returned no row")),
        }
    }

    /// Runs statements separated by `;`, without parameters.
    pub fn execute_batch(&self, sql: &str) -> Result<()> {
        match &self.backend {
            Backend::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Backend::Postgres(c) => Ok(with_client(c, |c| c.batch_execute(sql))?),
        }
    }

    /// Begins a transaction that writes: SQLite takes the write lock at once (`IMMEDIATE`),
    /// so that it never has to be upgraded (and fail) later.
    pub fn begin_write(&self) -> Result<()> {
        self.execute_batch(self.pick("BEGIN IMMEDIATE", "BEGIN"))
    }

    /// Begins a transaction that only reads, on one snapshot.
    pub fn begin_read(&self) -> Result<()> {
        self.execute_batch(self.pick(
            "BEGIN DEFERRED",
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        ))
    }

    pub fn commit(&self) -> Result<()> {
        self.execute_batch("COMMIT")
    }

    pub fn rollback(&self) -> Result<()> {
        self.execute_batch("ROLLBACK")
    }

    pub fn savepoint(&self, name: &str) -> Result<()> {
        self.execute_batch(&format!("SAVEPOINT {name}"))
    }

    pub fn release(&self, name: &str) -> Result<()> {
        self.execute_batch(&format!("RELEASE SAVEPOINT {name}"))
    }

    /// Undoes what was done since the savepoint and releases it.
    pub fn rollback_to(&self, name: &str) -> Result<()> {
        self.execute_batch(&format!(
            "ROLLBACK TO SAVEPOINT {name}; RELEASE SAVEPOINT {name}"
        ))
    }

    /// Whether the connection is lost (PostgreSQL: the server closed it, or the network failed);
    /// a SQLite connection never is.
    pub fn is_closed(&self) -> bool {
        match &self.backend {
            Backend::Sqlite(_) => false,
            Backend::Postgres(c) => c.borrow().as_ref().is_none_or(|c| c.is_closed()),
        }
    }

    /// Whether the connection is inside a transaction (SQLite; PostgreSQL answers `false`).
    pub fn in_transaction(&self) -> bool {
        match &self.backend {
            Backend::Sqlite(c) => !c.is_autocommit(),
            Backend::Postgres(_) => false,
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        // The client closes its connection on its own runtime, which must not be done on a
        // thread that drives another.
        if let Backend::Postgres(c) = &self.backend
            && let Some(client) = c.borrow_mut().take()
        {
            outside_runtime(move || drop(client));
        }
    }
}

/// Runs `f` where the blocking PostgreSQL client may block: here, unless this thread drives
/// an async runtime (then with `block_in_place`, or on a thread of its own).
pub fn outside_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Err(_) => f(),
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        Ok(_) => std::thread::scope(|s| match s.spawn(f).join() {
            Ok(v) => v,
            Err(panic) => std::panic::resume_unwind(panic),
        }),
    }
}

fn with_client<T: Send>(
    c: &RefCell<Option<postgres::Client>>,
    f: impl FnOnce(&mut postgres::Client) -> Result<T, postgres::Error> + Send,
) -> Result<T> {
    let mut guard = c.borrow_mut();
    let client = guard
        .as_mut()
        .ok_or_else(|| error(ErrorKind::Open, "the PostgreSQL connection is closed"))?;
    Ok(outside_runtime(move || f(client))?)
}

/// Binds each of a SQLite statement's parameters by its name: `$k` is the `k`-th value. A
/// parameter of another form (`?`, `?1`, `:name`) or beyond the values given is an error.
fn bind_by_name(st: &mut rusqlite::Statement<'_>, values: &[Value]) -> Result<()> {
    for index in 1..=st.parameter_count() {
        let name = st.parameter_name(index).unwrap_or("?");
        let value = name
            .strip_prefix('$')
            .and_then(|k| k.parse::<usize>().ok())
            .and_then(|k| k.checked_sub(1))
            .and_then(|k| values.get(k))
            .ok_or_else(|| {
                error(
                    ErrorKind::Other,
                    format!(
                        "the parameter `{name}` is not one of $1 to ${} (statements name their parameters $1, $2, …)",
                        values.len()
                    ),
                )
            })?;
        st.raw_bind_parameter(index, sqlite_value(value))?;
    }
    Ok(())
}

fn sqlite_value(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match v {
        Value::Null(_) => V::Null,
        Value::Int(n) => V::Integer(*n),
        Value::Real(x) => V::Real(*x),
        Value::Text(s) => V::Text(s.clone()),
        Value::Bool(b) => V::Integer(i64::from(*b)),
    }
}

/// A parameter as PostgreSQL takes it: the value and its type.
enum PgParam {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
    Bool(Option<bool>),
}

impl From<&Value> for PgParam {
    fn from(v: &Value) -> PgParam {
        match v {
            Value::Null(Kind::Int) => PgParam::Int(None),
            Value::Null(Kind::Real) => PgParam::Real(None),
            Value::Null(Kind::Text) => PgParam::Text(None),
            Value::Null(Kind::Bool) => PgParam::Bool(None),
            Value::Int(n) => PgParam::Int(Some(*n)),
            Value::Real(x) => PgParam::Real(Some(*x)),
            // PostgreSQL's text cannot hold NUL: it is stored as U+FFFD (the replacement
            // character), so that a reply or a name with one is kept rather than refused.
            Value::Text(s) if s.contains('\0') => PgParam::Text(Some(s.replace('\0', "\u{fffd}"))),
            Value::Text(s) => PgParam::Text(Some(s.clone())),
            Value::Bool(b) => PgParam::Bool(Some(*b)),
        }
    }
}

impl PgParam {
    fn as_param(&self) -> (&(dyn postgres::types::ToSql + Sync), postgres::types::Type) {
        use postgres::types::Type;
        match self {
            PgParam::Int(v) => (v, Type::INT8),
            PgParam::Real(v) => (v, Type::FLOAT8),
            PgParam::Text(v) => (v, Type::TEXT),
            PgParam::Bool(v) => (v, Type::BOOL),
        }
    }
}

fn pg_row(r: &postgres::Row) -> Result<Row> {
    use postgres::types::Type;
    let mut values = Vec::with_capacity(r.len());
    for (k, column) in r.columns().iter().enumerate() {
        let t = column.type_();
        let v = if *t == Type::INT8 {
            r.try_get::<_, Option<i64>>(k)?
                .map_or(Value::Null(Kind::Int), Value::Int)
        } else if *t == Type::INT4 {
            r.try_get::<_, Option<i32>>(k)?
                .map_or(Value::Null(Kind::Int), |n| Value::Int(n.into()))
        } else if *t == Type::INT2 {
            r.try_get::<_, Option<i16>>(k)?
                .map_or(Value::Null(Kind::Int), |n| Value::Int(n.into()))
        } else if *t == Type::BOOL {
            r.try_get::<_, Option<bool>>(k)?
                .map_or(Value::Null(Kind::Bool), Value::Bool)
        } else if *t == Type::FLOAT8 {
            r.try_get::<_, Option<f64>>(k)?
                .map_or(Value::Null(Kind::Real), Value::Real)
        } else if *t == Type::FLOAT4 {
            r.try_get::<_, Option<f32>>(k)?
                .map_or(Value::Null(Kind::Real), |x| Value::Real(x.into()))
        } else if [Type::TEXT, Type::VARCHAR, Type::BPCHAR, Type::NAME].contains(t) {
            r.try_get::<_, Option<String>>(k)?
                .map_or(Value::Null(Kind::Text), Value::Text)
        } else {
            return Err(error(
                ErrorKind::Type,
                format!(
                    "column `{}` is of PostgreSQL type {t}, which this program does not read (cast it)",
                    column.name()
                ),
            ));
        };
        values.push(v);
    }
    Ok(Row { values })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_reads_back_what_it_was_given_with_typed_nulls() {
        let c = Conn::sqlite(rusqlite::Connection::open_in_memory().unwrap());
        c.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, s TEXT, b INTEGER)")
            .unwrap();
        let id: i64 = c
            .query_row(
                "INSERT INTO t (n, s, b) VALUES ($1, $2, $3) RETURNING id",
                params![7i64, None::<String>, true],
                |r| r.get(0),
            )
            .unwrap();
        let (n, s, b): (i64, Option<String>, bool) = c
            .query_row(
                "SELECT n, s, b FROM t WHERE id = $1 AND ($2 IS NULL OR s = $2)",
                params![id, None::<String>],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!((n, s, b), (7, None, true));
        let none = c
            .query_row("SELECT n FROM t WHERE id = $1", [id + 1], |r| {
                r.get::<_, i64>(0)
            })
            .optional()
            .unwrap();
        assert_eq!(none, None);
        let err = c
            .execute("INSERT INTO t (id) VALUES ($1)", [id])
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Constraint);
    }

    #[test]
    fn sqlite_binds_parameters_by_name_whatever_order_they_first_appear_in() {
        let c = Conn::sqlite(rusqlite::Connection::open_in_memory().unwrap());
        // SQLite numbers `$2` as its first parameter here: bound by position, `$2` would be 1.
        let (a, b, again): (i64, String, i64) = c
            .query_row("SELECT $2, $1, $2 + 0", params!["one", 2i64], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap();
        assert_eq!((a, b.as_str(), again), (2, "one", 2));
        // Only `$k` parameters, each one of those given.
        for sql in [
            "SELECT ?1",
            "SELECT ?",
            "SELECT :a",
            "SELECT $2",
            "SELECT $0",
        ] {
            let e = c.query(sql, [1i64]).unwrap_err();
            assert!(e.message.contains("is not one of $1 to $1"), "{sql}: {e}");
        }
    }
}
