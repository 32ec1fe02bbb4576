//! Changing one key of a TOML config file while keeping its comments and
//! layout (`jp config set`).

use toml_edit::{DocumentMut, Item, Table, Value};

use crate::path::ConfigPath;

/// Why a key cannot be set in a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The file is not valid TOML.
    #[error("the file is not valid TOML: {0}")]
    Parse(String),
    /// A key on the way is a value, not a table.
    #[error("`{key}` is set to a {found}, not a table, so `{target}` cannot be set below it")]
    NotATable {
        /// The key in the way.
        key: String,
        /// What it is.
        found: &'static str,
        /// The key being set.
        target: String,
    },
    /// The value cannot be written in TOML.
    #[error("{0}")]
    Value(String),
    /// The root cannot be set.
    #[error("a key is needed")]
    Root,
}

/// Sets `path` to `value` in the TOML `text` and returns the new text.
/// Existing comments, order and formatting are kept; a replaced value keeps
/// the comments around it, and a table or array of tables given an object
/// or a list of objects is updated in place, so its own comments stay.
/// Missing tables are created.
///
/// # Errors
///
/// When the text is not TOML, a key on the way is not a table, or the value
/// has a `null` (TOML has none).
pub fn set_key(
    text: &str,
    path: &ConfigPath,
    value: &serde_json::Value,
) -> Result<String, EditError> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| EditError::Parse(e.message().to_owned()))?;
    let (last, parents) = path.segments().split_last().ok_or(EditError::Root)?;

    let mut table: &mut dyn toml_edit::TableLike = doc.as_table_mut();
    let mut inline = false;
    let mut walked = ConfigPath::root();
    for segment in parents {
        walked = walked.join(segment.clone());
        let item = table.entry(segment).or_insert_with(|| {
            if inline {
                Item::Value(Value::InlineTable(toml_edit::InlineTable::new()))
            } else {
                let mut t = Table::new();
                t.set_implicit(true);
                Item::Table(t)
            }
        });
        let found = kind(item);
        inline = matches!(item, Item::Value(_));
        table = item
            .as_table_like_mut()
            .ok_or_else(|| EditError::NotATable {
                key: walked.to_string(),
                found,
                target: path.to_string(),
            })?;
    }

    set_in(table, last, value)?;
    Ok(doc.to_string())
}

/// Sets `key` of `table` to `value`, in place where the key exists
/// ([`replace`]).
fn set_in(
    table: &mut dyn toml_edit::TableLike,
    key: &str,
    value: &serde_json::Value,
) -> Result<(), EditError> {
    if let Some(item) = table.get_mut(key)
        && replace(item, value)?
    {
        return Ok(());
    }
    table.remove(key);
    table.insert(key, Item::Value(to_toml(value)?));
    Ok(())
}

/// Puts `value` where `item` is, keeping
/// what it can of the file: a value keeps the comments around it; a table
/// given an object keeps its header, its comments and the comments of the
/// keys that stay, and is updated key by key; an array of tables given a
/// list of objects is updated table by table. False when nothing of `item`
/// can stay: the caller puts the value in its place as a new key.
fn replace(item: &mut Item, value: &serde_json::Value) -> Result<bool, EditError> {
    match (item, value) {
        (Item::Table(table), serde_json::Value::Object(map)) => update_table(table, map)?,
        (Item::Value(Value::InlineTable(table)), serde_json::Value::Object(map)) => {
            update_table(table, map)?;
        }
        (Item::ArrayOfTables(tables), serde_json::Value::Array(items))
            if items.iter().all(serde_json::Value::is_object) =>
        {
            while tables.len() > items.len() {
                tables.remove(tables.len() - 1);
            }
            for (i, new) in items.iter().enumerate() {
                let serde_json::Value::Object(map) = new else {
                    continue;
                };
                match tables.get_mut(i) {
                    Some(table) => update_table(table, map)?,
                    None => {
                        let mut table = Table::new();
                        update_table(&mut table, map)?;
                        tables.push(table);
                    }
                }
            }
        }
        (Item::Value(existing), _) => {
            let decor = existing.decor().clone();
            *existing = to_toml(value)?;
            *existing.decor_mut() = decor;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Makes `table` hold exactly `map`: keys that stay are replaced in place
/// ([`replace`]), keys that go are removed, new keys are added at the end.
fn update_table(
    table: &mut dyn toml_edit::TableLike,
    map: &serde_json::Map<String, serde_json::Value>,
) -> Result<(), EditError> {
    let gone: Vec<String> = table
        .iter()
        .map(|(key, _)| key.to_owned())
        .filter(|key| !map.contains_key(key))
        .collect();
    for key in gone {
        table.remove(&key);
    }
    for (key, value) in map {
        set_in(table, key, value)?;
    }
    Ok(())
}

fn kind(item: &Item) -> &'static str {
    match item {
        Item::None => "nothing",
        Item::Table(_) | Item::Value(Value::InlineTable(_)) => "table",
        Item::ArrayOfTables(_) => "array of tables",
        Item::Value(Value::String(_)) => "string",
        Item::Value(Value::Integer(_)) => "integer",
        Item::Value(Value::Float(_)) => "float",
        Item::Value(Value::Boolean(_)) => "boolean",
        Item::Value(Value::Datetime(_)) => "datetime",
        Item::Value(Value::Array(_)) => "array",
    }
}

fn to_toml(value: &serde_json::Value) -> Result<Value, EditError> {
    Ok(match value {
        serde_json::Value::Null => {
            return Err(EditError::Value(
                "TOML has no null; set a value or remove the key from the file".into(),
            ));
        }
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::from(i),
            None => match n.as_f64() {
                Some(f) if f.is_finite() && n.as_u64().is_none() => Value::from(f),
                _ => return Err(EditError::Value(format!("{n} does not fit a TOML number"))),
            },
        },
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => {
            let mut array = toml_edit::Array::new();
            for item in items {
                array.push(to_toml(item)?);
            }
            Value::Array(array)
        }
        serde_json::Value::Object(map) => {
            let mut table = toml_edit::InlineTable::new();
            for (k, v) in map {
                table.insert(k, to_toml(v)?);
            }
            Value::InlineTable(table)
        }
    })
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
