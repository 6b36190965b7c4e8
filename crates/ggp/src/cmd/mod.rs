pub mod check;
pub mod convert;
pub mod fmt;
