//! Statistics as pure functions over plain data: agreement between raters, ranks and
//! the study's tests. No database, no HTTP; tested against reference vectors.
