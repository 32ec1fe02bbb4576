//! Tables of named entries (tools, MCP servers, custom providers) merged
//! entry by entry, and each entry field by field, so that a layer can
//! change one field of one entry without repeating the rest (schematic's
//! default would replace the whole table).

use indexmap::IndexMap;
use schematic::PartialConfig;

/// Merges `next` over `prev` by name; an entry in both is merged field by
/// field, a merge error naming it as `what` (`tool`, `MCP server`).
///
/// # Errors
///
/// An entry's fields do not merge.
pub(crate) fn merge_by_name<T: PartialConfig<Context = ()>>(
    mut prev: IndexMap<String, T>,
    next: IndexMap<String, T>,
    context: &(),
    what: &str,
) -> schematic::MergeResult<IndexMap<String, T>> {
    for (name, entry) in next {
        match prev.get_mut(&name) {
            Some(existing) => existing
                .merge(context, entry)
                .map_err(|e| schematic::MergeError::new(format!("{what} `{name}`: {e}")))?,
            None => {
                prev.insert(name, entry);
            }
        }
    }
    Ok(Some(prev))
}
