//! Pages of long lists (a validator's queue, the admin's item lists): where a page
//! starts, told by the key of the row beside it (a keyset, never a row count to skip),
//! and the id prefix that narrows a list. Pure: the store reads the rows.

use crate::domain::rules::FieldError;

/// The rows of one page. A list of this many rows or fewer is one page.
pub const PAGE_ROWS: usize = 250;

/// The most rows an API client may ask for in one page.
pub const MAX_PAGE_ROWS: usize = 1000;

/// Which side of the row named by a cursor the page lies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The rows after it (the next page).
    After,
    /// The rows before it (the previous page).
    Before,
}

/// Where a page starts: beside the row with this item id. In a validator's queue the
/// cursor also carries whether that row was decided when the page was drawn, so that
/// an item decided since then does not pull the page into the decided part (and an
/// item decided while someone pages moves there without being shown twice).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub side: Side,
    pub decided: bool,
    pub key: String,
}

impl Cursor {
    /// The text of `before` for the last page.
    pub const END: &'static str = "end";

    /// Whether this is the end of the list (the last page: `before=end`).
    pub fn is_end(&self) -> bool {
        self.key.is_empty()
    }

    /// The cursor's text in a link: `u:ID` (an undecided row) or `d:ID` (a decided
    /// one); a list without a decided part uses `u:`.
    pub fn token(decided: bool, key: &str) -> String {
        format!("{}:{key}", if decided { 'd' } else { 'u' })
    }

    /// From a request's `after` and `before` fields (at most one of them).
    pub fn parse(after: Option<&str>, before: Option<&str>) -> Result<Option<Cursor>, FieldError> {
        fn given(v: Option<&str>) -> Option<&str> {
            v.map(str::trim).filter(|v| !v.is_empty())
        }
        let (field, side, text) = match (given(after), given(before)) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => {
                return Err(FieldError::new(
                    "before",
                    "give `after` or `before`, not both",
                ));
            }
            (Some(t), None) => ("after", Side::After, t),
            (None, Some(t)) => ("before", Side::Before, t),
        };
        if side == Side::Before && text == Cursor::END {
            return Ok(Some(Cursor {
                side,
                decided: true,
                key: String::new(),
            }));
        }
        let (decided, key) = match text.split_once(':') {
            Some(("u", key)) => (false, key),
            Some(("d", key)) => (true, key),
            _ => {
                return Err(FieldError::new(
                    field,
                    format!(
                        "`{text}` is not a page position: it reads `u:ID` or `d:ID`{}",
                        if side == Side::Before {
                            " (or `end`)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        };
        crate::domain::check_identifier("the item id", key)
            .map_err(|m| FieldError::new(field, m))?;
        Ok(Some(Cursor {
            side,
            decided,
            key: key.to_string(),
        }))
    }
}

/// The id prefix a list is narrowed to (`None`: no prefix given). A prefix holds only
/// the characters an id can hold.
pub fn prefix(field: &'static str, text: Option<&str>) -> Result<Option<String>, FieldError> {
    let Some(p) = text.map(str::trim).filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    if p.len() > 200 {
        return Err(FieldError::new(
            field,
            "an id prefix is at most 200 characters",
        ));
    }
    if let Some(c) = p
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(FieldError::new(
            field,
            format!(
                "`{p}` contains `{c}`, which no id holds: ids are letters, digits, `_`, `-` and `.`"
            ),
        ));
    }
    Ok(Some(p.to_string()))
}

/// The rows a page may hold: `PAGE_ROWS` unless a client asks for fewer or more (at
/// most `MAX_PAGE_ROWS`).
pub fn limit(asked: Option<usize>) -> Result<usize, FieldError> {
    match asked {
        None => Ok(PAGE_ROWS),
        Some(n) if (1..=MAX_PAGE_ROWS).contains(&n) => Ok(n),
        Some(n) => Err(FieldError::new(
            "limit",
            format!("{n} rows: a page holds 1 to {MAX_PAGE_ROWS}"),
        )),
    }
}

/// A page of rows, with how many rows the list holds under its filters and whether
/// rows lie before and after the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub rows: Vec<T>,
    pub matching: usize,
    pub more_before: bool,
    pub more_after: bool,
    /// How many matching rows lie before this page, where known (the first and the
    /// last page always; a middle one when its list counted them).
    pub offset: Option<usize>,
}

impl<T> Page<T> {
    /// The page's number among pages of `limit` rows, and how many there are, where its
    /// place is known.
    pub fn number(&self, limit: usize) -> Option<(usize, usize)> {
        let limit = limit.max(1);
        let offset = self.offset?;
        let pages = self.matching.div_ceil(limit).max(1);
        // The last page (which may overlap the one before) is the last; another is
        // the page that holds its first row.
        Some((
            if self.more_after {
                offset / limit + 1
            } else {
                pages
            },
            pages,
        ))
    }
}

/// The 1-based page number a request asked for (`page`), checked.
pub fn page_number(text: &str) -> Result<Option<usize>, FieldError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(Some(n)),
        _ => Err(FieldError::new(
            "page",
            format!("`{text}` is not a page number: give 1 or more"),
        )),
    }
}

/// The cursor of page `n` (pages of `limit` rows) of a list read whole: after the last
/// row of page `n - 1` among the rows `keep` keeps; none for the first page. A number
/// past the end gives the last page.
pub fn cursor_of_page<T>(
    rows: &[T],
    key: impl Fn(&T) -> &str,
    keep: impl Fn(&T) -> bool,
    n: usize,
    limit: usize,
) -> Option<Cursor> {
    let skip = n.saturating_sub(1).saturating_mul(limit.max(1));
    if skip == 0 {
        return None;
    }
    let kept: Vec<&T> = rows.iter().filter(|r| keep(r)).collect();
    if skip >= kept.len() {
        return Some(Cursor {
            side: Side::Before,
            decided: true,
            key: String::new(),
        });
    }
    Some(Cursor {
        side: Side::After,
        decided: false,
        key: key(kept[skip - 1]).to_string(),
    })
}

/// Cuts a page from rows read beside a cursor: `read` holds at most `limit + 1` rows in
/// the list's order, read going away from the cursor (for `Before`, nearest first, so
/// in reverse order); the extra row only says that more lie beyond.
pub fn cut<T>(read: Vec<T>, limit: usize, cursor: Option<&Cursor>, matching: usize) -> Page<T> {
    cut_beside(
        read,
        limit,
        cursor.map(|c| c.side),
        cursor.is_some_and(Cursor::is_end),
        matching,
    )
}

/// `cut` for a list whose cursor is its own: the page lies on `side` of a row (none:
/// the first page), or with `end`, is the last page.
pub fn cut_beside<T>(
    mut read: Vec<T>,
    limit: usize,
    side: Option<Side>,
    end: bool,
    matching: usize,
) -> Page<T> {
    let beyond = read.len() > limit;
    read.truncate(limit);
    match side {
        Some(Side::Before) => {
            read.reverse();
            Page {
                offset: end.then(|| matching.saturating_sub(read.len())),
                rows: read,
                matching,
                more_before: beyond,
                more_after: !end,
            }
        }
        side => Page {
            offset: side.is_none().then_some(0),
            rows: read,
            matching,
            more_before: side.is_some(),
            more_after: beyond,
        },
    }
}

/// The page beside a cursor of a list read whole to be counted (the admin's item
/// lists): `rows` are every row the list is cut from, in order, and `keep` says which
/// belong to it. The cursor's row is found among all of them, so a page still starts
/// in its place when that row has left the list since (its group changed).
pub fn page_of<T>(
    rows: Vec<T>,
    key: impl Fn(&T) -> &str,
    keep: impl Fn(&T) -> bool,
    cursor: Option<&Cursor>,
    limit: usize,
) -> Result<Page<T>, FieldError> {
    let matching = rows.iter().filter(|r| keep(r)).count();
    let Some(c) = cursor else {
        let read: Vec<T> = rows
            .into_iter()
            .filter(|r| keep(r))
            .take(limit.saturating_add(1))
            .collect();
        return Ok(cut(read, limit, None, matching));
    };
    let at = if c.is_end() {
        Some(rows.len())
    } else {
        rows.iter().position(|r| key(r) == c.key)
    };
    let Some(at) = at else {
        return Err(FieldError::new(
            if c.side == Side::After {
                "after"
            } else {
                "before"
            },
            format!("no item `{}` in this list", c.key),
        ));
    };
    // The kept rows before the page: up to the cursor's row (with it, going forward).
    let before_cursor = rows
        .iter()
        .take(if c.side == Side::After { at + 1 } else { at })
        .filter(|r| keep(r))
        .count();
    let read: Vec<T> = match c.side {
        Side::After => rows
            .into_iter()
            .skip(at + 1)
            .filter(|r| keep(r))
            .take(limit.saturating_add(1))
            .collect(),
        Side::Before => {
            let mut before: Vec<T> = rows.into_iter().take(at).filter(|r| keep(r)).collect();
            before.reverse();
            before.truncate(limit.saturating_add(1));
            before
        }
    };
    let mut page = cut(read, limit, Some(c), matching);
    page.offset = Some(match c.side {
        Side::After => before_cursor,
        Side::Before => before_cursor.saturating_sub(page.rows.len()),
    });
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_from_its_token() {
        let t = Cursor::token(true, "q_0012.b");
        let c = Cursor::parse(Some(&t), None).unwrap().unwrap();
        assert_eq!(
            c,
            Cursor {
                side: Side::After,
                decided: true,
                key: "q_0012.b".into()
            }
        );
        let c = Cursor::parse(Some(""), Some("u:c1")).unwrap().unwrap();
        assert_eq!(
            (c.side, c.decided, c.key.as_str()),
            (Side::Before, false, "c1")
        );
        assert_eq!(Cursor::parse(None, Some("  ")).unwrap(), None);
    }

    #[test]
    fn bad_cursors_and_prefixes_name_their_field() {
        assert_eq!(
            Cursor::parse(Some("x:c1"), None).unwrap_err().field,
            "after"
        );
        assert_eq!(
            Cursor::parse(None, Some("u:a b")).unwrap_err().field,
            "before"
        );
        assert_eq!(
            Cursor::parse(Some("u:a"), Some("u:b")).unwrap_err().field,
            "before"
        );
        let e = prefix("id", Some("MC F")).unwrap_err();
        assert_eq!(e.field, "id");
        assert!(e.message.contains("` `"), "{}", e.message);
        assert_eq!(
            prefix("id", Some(" MC_F ")).unwrap().as_deref(),
            Some("MC_F")
        );
        assert_eq!(prefix("id", Some("")).unwrap(), None);
        assert_eq!(limit(Some(0)).unwrap_err().field, "limit");
        assert_eq!(limit(Some(MAX_PAGE_ROWS + 1)).unwrap_err().field, "limit");
        assert_eq!(limit(None).unwrap(), PAGE_ROWS);
    }

    fn keys(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("k{i:04}")).collect()
    }

    #[test]
    fn a_page_knows_its_place_and_a_page_number_finds_its_rows() {
        let list = keys(25);
        let all = |_: &String| true;
        for n in 1..=3 {
            let cursor = cursor_of_page(&list, |k| k, all, n, 10);
            let p = page_of(list.clone(), |k| k, all, cursor.as_ref(), 10).unwrap();
            let first = (n - 1) * 10;
            assert_eq!(p.offset, Some(first), "page {n}");
            assert_eq!(p.rows[0], list[first], "page {n}");
            assert_eq!(p.number(10), Some((n, 3)));
        }
        // Past the end, and from the end: the last ten rows, the last page.
        let past = cursor_of_page(&list, |k| k, all, 4, 10);
        let end = Cursor::parse(None, Some("end")).unwrap();
        assert_eq!(past, end);
        let p = page_of(list.clone(), |k| k, all, end.as_ref(), 10).unwrap();
        assert_eq!((p.offset, p.number(10)), (Some(15), Some((3, 3))));
        // A page read backward from a row knows its place too.
        let c = Cursor::parse(None, Some("u:k0015")).unwrap();
        let p = page_of(list.clone(), |k| k, all, c.as_ref(), 10).unwrap();
        assert_eq!((p.offset, p.rows[0].as_str()), (Some(5), "k0005"));
        // Only the kept rows count.
        let even = |k: &String| k.ends_with(['0', '2', '4', '6', '8']);
        let c = cursor_of_page(&list, |k| k, even, 2, 5);
        let p = page_of(list.clone(), |k| k, even, c.as_ref(), 5).unwrap();
        assert_eq!((p.offset, p.rows[0].as_str()), (Some(5), "k0010"));
        assert_eq!(page_number(" 3 ").unwrap(), Some(3));
        assert_eq!(page_number("").unwrap(), None);
        assert_eq!(page_number("0").unwrap_err().field, "page");
        assert_eq!(page_number("two").unwrap_err().field, "page");
    }

    #[test]
    fn pages_cover_a_list_once_forward_and_backward() {
        for n in [0, 1, 9, 10, 11, 25, 30] {
            let list = keys(n);
            // Forward through every page.
            let mut seen = Vec::new();
            let mut cursor = None;
            loop {
                let p = page_of(list.clone(), |k| k, |_| true, cursor.as_ref(), 10).unwrap();
                assert_eq!(p.matching, n);
                assert_eq!(p.more_before, !seen.is_empty());
                seen.extend(p.rows.iter().cloned());
                if !p.more_after {
                    break;
                }
                let last = p.rows.last().unwrap();
                cursor = Some(Cursor {
                    side: Side::After,
                    decided: false,
                    key: last.clone(),
                });
            }
            assert_eq!(seen, list, "forward over {n}");
            // Backward from the end.
            let mut back: Vec<String> = Vec::new();
            let mut cursor = list.last().map(|k| Cursor {
                side: Side::After,
                decided: false,
                key: k.clone(),
            });
            // The page after the last row is empty and says rows lie before.
            if let Some(c) = cursor.take() {
                let p = page_of(list.clone(), |k| k, |_| true, Some(&c), 10).unwrap();
                assert!(p.rows.is_empty() && p.more_before && !p.more_after);
                back.push(c.key.clone());
                cursor = Some(Cursor {
                    side: Side::Before,
                    ..c
                });
            }
            while let Some(c) = cursor.take() {
                let p = page_of(list.clone(), |k| k, |_| true, Some(&c), 10).unwrap();
                assert!(p.more_after);
                let mut rows = p.rows.clone();
                rows.extend(back);
                back = rows;
                if p.more_before {
                    cursor = Some(Cursor {
                        side: Side::Before,
                        decided: false,
                        key: p.rows[0].clone(),
                    });
                }
            }
            assert_eq!(back, list, "backward over {n}");
        }
    }

    #[test]
    fn a_row_that_left_the_list_still_places_the_page() {
        // Odd rows are in the list; the cursor names k0003, which has left it.
        let c = Cursor {
            side: Side::After,
            decided: false,
            key: "k0003".into(),
        };
        let odd = |k: &String| k.ends_with(['1', '5', '7', '9']);
        let p = page_of(keys(12), |k| k, odd, Some(&c), 2).unwrap();
        assert_eq!(p.rows, vec!["k0005".to_string(), "k0007".into()]);
        assert_eq!((p.matching, p.more_before, p.more_after), (5, true, true));
        let c = Cursor {
            side: Side::Before,
            ..c
        };
        let p = page_of(keys(12), |k| k, odd, Some(&c), 2).unwrap();
        assert_eq!(p.rows, vec!["k0001".to_string()]);
        assert_eq!((p.more_before, p.more_after), (false, true));
    }

    #[test]
    fn the_last_page_is_read_from_the_end() {
        let end = Cursor::parse(None, Some("end")).unwrap().unwrap();
        assert!(end.is_end());
        let p = page_of(keys(25), |k| k, |_| true, Some(&end), 10).unwrap();
        assert_eq!(p.rows, keys(25)[15..].to_vec());
        assert_eq!((p.more_before, p.more_after), (true, false));
        let p = page_of(keys(4), |k| k, |_| true, Some(&end), 10).unwrap();
        assert_eq!(
            (p.rows.len(), p.more_before, p.more_after),
            (4, false, false)
        );
        assert_eq!(Cursor::parse(Some("end"), None).unwrap_err().field, "after");
    }

    #[test]
    fn a_cursor_outside_the_list_is_named() {
        let c = Cursor {
            side: Side::After,
            decided: false,
            key: "nope".into(),
        };
        let e = page_of(keys(3), |k| k, |_| true, Some(&c), 10).unwrap_err();
        assert_eq!(e.field, "after");
        assert!(e.message.contains("nope"));
    }
}
