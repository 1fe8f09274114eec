//! Text a field may hold. A NUL or another control character cannot be stored by
//! PostgreSQL (NUL), breaks the CSV exports and terminals, and is never typed on
//! purpose: such text is refused where it enters, naming the field, on every
//! backend alike. Tabs and line breaks stay allowed in free text. So are refused the
//! bidirectional embedding, override and isolate controls (U+202A-U+202E,
//! U+2066-U+2069): they make text display in an order other than the one it is stored
//! in ("Trojan Source", CVE-2021-42574), so a note or a question could read one way to
//! its writer and another to the admin, the author or a spreadsheet. The direction
//! marks (U+200E, U+200F, U+061C) set one character's direction only and stay allowed,
//! as right-to-left text needs them.

/// Whether `c` is a bidirectional embedding, override or isolate control.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// The first character of `s` that a text field must not hold, if any: a control
/// character other than tab, line feed and carriage return, or a bidirectional control.
pub fn forbidden_char(s: &str) -> Option<char> {
    s.chars()
        .find(|&c| (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || is_bidi_control(c))
}

/// Why `s` cannot be stored, if it cannot.
pub fn check(s: &str) -> Result<(), String> {
    match forbidden_char(s) {
        None => Ok(()),
        Some(c) if is_bidi_control(c) => Err(format!(
            "contains the bidirectional control character U+{:04X}, which shows text in another order than it is stored; a text field cannot hold it",
            u32::from(c)
        )),
        Some(c) => Err(format!(
            "contains the control character U+{:04X}, which a text field cannot hold",
            u32::from(c)
        )),
    }
}

/// The first string in a JSON value (keys included) holding a forbidden character:
/// its path (`note`, `questions[2].options[1]`) and the problem.
pub fn check_json(value: &serde_json::Value) -> Result<(), (String, String)> {
    fn walk(v: &serde_json::Value, path: &mut String) -> Result<(), (String, String)> {
        use serde_json::Value;
        match v {
            Value::String(s) => check(s).map_err(|m| (field_name(path), m)),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    walk(item, path)?;
                    path.truncate(len);
                }
                Ok(())
            }
            Value::Object(map) => {
                for (k, item) in map {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                    check(k).map_err(|m| (field_name(path), format!("its name {m}")))?;
                    walk(item, path)?;
                    path.truncate(len);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
    walk(value, &mut String::new())
}

fn field_name(path: &str) -> String {
    if path.is_empty() {
        "body".to_string()
    } else {
        // A key holding a control character is shown escaped.
        path.chars().flat_map(char::escape_default).collect()
    }
}

/// A free-text cell as a spreadsheet must show it: text that a spreadsheet would read
/// as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) gets a
/// leading apostrophe, as OWASP recommends; so does text that already starts with one,
/// so that [`from_spreadsheet`] gives every cell back exactly.
pub fn spreadsheet_safe(s: &str) -> std::borrow::Cow<'_, str> {
    match s.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r' | '\'') => format!("'{s}").into(),
        _ => s.into(),
    }
}

/// The text of a cell written by [`spreadsheet_safe`].
pub fn from_spreadsheet(s: &str) -> &str {
    s.strip_prefix('\'').unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn control_characters_are_refused_but_line_breaks_kept() {
        assert!(check("a note\nwith two lines\tand a tab\r\n").is_ok());
        assert!(check("caf\u{e9} \u{2014} ok").is_ok());
        let e = check("nul\0here").unwrap_err();
        assert!(e.contains("U+0000"), "{e}");
        assert!(check("bell\u{7}").is_err());
        assert!(check("del\u{7f}").is_err());
        assert!(check("c1\u{85}").is_err());
    }

    #[test]
    fn bidirectional_controls_are_refused_but_direction_marks_kept() {
        for c in ('\u{202A}'..='\u{202E}').chain('\u{2066}'..='\u{2069}') {
            let e = check(&format!("clean{c}note")).unwrap_err();
            assert!(
                e.contains(&format!("U+{:04X}", u32::from(c))) && e.contains("bidirectional"),
                "{e}"
            );
        }
        // Right-to-left text with its direction marks, and the characters next to the
        // controls, are text.
        assert!(check("\u{5e9}\u{5dc}\u{5d5}\u{5dd} \u{200f}abc\u{200e} \u{61c}").is_ok());
        assert!(check("\u{2029}\u{2065}\u{206a}\u{2029}").is_ok());
    }

    #[test]
    fn formulas_become_text_and_come_back_exactly() {
        for (cell, shown) in [
            ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
            ("+1", "'+1"),
            ("-2", "'-2"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("'quoted", "''quoted"),
            ("plain note", "plain note"),
            ("", ""),
        ] {
            assert_eq!(spreadsheet_safe(cell), shown);
            assert_eq!(from_spreadsheet(&spreadsheet_safe(cell)), cell);
        }
    }

    #[test]
    fn json_paths_name_the_field_at_fault() {
        let v = json!({"clip_id": "c", "questions": [{"options": ["a", "b\u{0}"]}]});
        let (field, _) = check_json(&v).unwrap_err();
        assert_eq!(field, "questions[0].options[1]");
        assert!(check_json(&json!({"note": "fine", "n": 3})).is_ok());
        let (field, msg) = check_json(&json!({"no\u{1}te": "x"})).unwrap_err();
        assert!(field.starts_with("no"), "{field}");
        assert!(msg.contains("name"), "{msg}");
    }
}
