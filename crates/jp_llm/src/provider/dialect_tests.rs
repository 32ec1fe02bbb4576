//! Tests of the provider dialects of a tool's schema: the shapes published
//! servers send, whole, and generated schemas checked against the original
//! with a validator (the `props` module).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

#[path = "dialect_props_tests.rs"]
mod props;

/// The three dialects of `schema`, as JSON (Gemini's `None` as `null`).
fn all(schema: &Value) -> (Value, Value, Value) {
    (
        anthropic(schema).into_owned(),
        openai(schema).into_owned(),
        gemini(schema).map_or(Value::Null, Value::Object),
    )
}

/// What jp builds from a tool's config: sent exactly as it is, borrowed,
/// to Anthropic and OpenAI, and translated for Gemini as before.
#[test]
fn a_schema_jp_built_is_sent_as_it_is() {
    let schema = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Where."},
            "lines": {"type": "array", "items": {"type": "integer"}},
            "mode": {"type": ["string", "null"], "enum": ["a", "b"]}
        },
        "required": ["path"],
        "additionalProperties": false
    });
    assert!(matches!(anthropic(&schema), Cow::Borrowed(_)));
    assert!(matches!(openai(&schema), Cow::Borrowed(_)));
    assert_eq!(
        gemini(&schema),
        super::super::google::schema::parameters(&schema)
    );
    let empty = json!({"type": "object", "properties": {}, "additionalProperties": false});
    assert!(matches!(anthropic(&empty), Cow::Borrowed(_)));
    assert!(matches!(openai(&empty), Cow::Borrowed(_)));
    assert_eq!(gemini(&empty), None);
}

/// pydantic's `Optional[str] = None`, as `mcp-server-git` sends it.
#[test]
fn pydantic_optional() {
    let schema = json!({
        "type": "object",
        "title": "GitLog",
        "properties": {
            "repo_path": {"type": "string", "title": "Repo Path"},
            "start_timestamp": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": null,
                "title": "Start Timestamp"
            }
        },
        "required": ["repo_path"]
    });
    let (anthropic, openai, gemini) = all(&schema);
    assert_eq!(anthropic, schema);
    assert_eq!(openai, schema);
    assert_eq!(
        gemini,
        json!({
            "type": "object",
            "title": "GitLog",
            "propertyOrdering": ["repo_path", "start_timestamp"],
            "properties": {
                "repo_path": {"type": "string", "title": "Repo Path"},
                "start_timestamp": {
                    "default": null,
                    "title": "Start Timestamp",
                    "type": "string",
                    "nullable": true
                }
            },
            "required": ["repo_path"]
        })
    );
}

/// The sequential-thinking server's `type: [boolean, string]`.
#[test]
fn a_list_of_types() {
    let schema = json!({
        "type": "object",
        "properties": {"needsMoreThoughts": {"type": ["boolean", "string"]}}
    });
    let (anthropic, openai, gemini) = all(&schema);
    assert_eq!(anthropic, schema);
    assert_eq!(openai, schema);
    assert_eq!(
        gemini,
        json!({
            "type": "object",
            "properties": {
                "needsMoreThoughts": {"anyOf": [{"type": "boolean"}, {"type": "string"}]}
            }
        })
    );
}

/// A pydantic nested model: `$defs` and a `$ref` beside nothing.
#[test]
fn a_nested_model_by_reference() {
    let schema = json!({
        "$defs": {
            "Author": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
                "required": ["name"],
                "title": "Author"
            }
        },
        "type": "object",
        "properties": {"author": {"$ref": "#/$defs/Author"}, "message": {"type": "string"}},
        "required": ["author", "message"]
    });
    let (anthropic, openai, gemini) = all(&schema);
    assert_eq!(anthropic, schema);
    assert_eq!(openai, schema);
    assert_eq!(
        gemini,
        json!({
            "type": "object",
            "propertyOrdering": ["author", "message"],
            "properties": {
                "author": {
                    "type": "object",
                    "propertyOrdering": ["name", "email"],
                    "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
                    "required": ["name"],
                    "title": "Author"
                },
                "message": {"type": "string"}
            },
            "required": ["author", "message"]
        })
    );
}

/// A draft-07 schema as zod's converter writes it: `definitions`, a
/// `$ref` into them, and tuple `items`.
#[test]
fn a_draft_07_schema() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "range": {"$ref": "#/definitions/Range", "description": "Lines."},
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": false}
        },
        "definitions": {
            "Range": {"type": "object", "properties": {"start": {"type": "integer", "minimum": 1}}}
        },
        "additionalProperties": false
    });
    let converted = json!({
        "type": "object",
        "properties": {
            "range": {"$ref": "#/$defs/Range", "description": "Lines."},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false}
        },
        "$defs": {
            "Range": {"type": "object", "properties": {"start": {"type": "integer", "minimum": 1}}}
        },
        "additionalProperties": false
    });
    let (anthropic, openai, gemini) = all(&schema);
    assert_eq!(anthropic.to_string(), converted.to_string());
    assert_eq!(openai.to_string(), converted.to_string());
    assert_eq!(
        gemini.to_string(),
        json!({
            "type": "object",
            "propertyOrdering": ["range", "pair"],
            "properties": {
                "range": {
                    "description": "Lines.",
                    "type": "object",
                    "properties": {"start": {"type": "integer", "minimum": 1}}
                },
                "pair": {
                    "type": "array",
                    "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
                }
            }
        })
        .to_string()
    );
}

/// A root `anyOf` of two objects (a tool taking one of two shapes): one
/// object whose properties say what either shape allows. `url` keeps its
/// type since the first shape allows no other property; `path` is free
/// since the second shape allows any.
#[test]
fn a_root_union_of_two_objects() {
    let schema = json!({
        "anyOf": [
            {
                "type": "object",
                "properties": {"kind": {"const": "file"}, "path": {"type": "string"}},
                "required": ["kind", "path"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "properties": {"kind": {"const": "url"}, "url": {"type": "string", "description": "Where."}},
                "required": ["kind", "url"]
            }
        ]
    });
    let flat = json!({
        "type": "object",
        "properties": {
            "kind": {"anyOf": [{"const": "file"}, {"const": "url"}]},
            "path": {},
            "url": {"type": "string", "description": "Where."}
        },
        "required": ["kind"]
    });
    let (anthropic, openai, gemini) = all(&schema);
    assert_eq!(anthropic.to_string(), flat.to_string());
    assert_eq!(openai.to_string(), flat.to_string());
    assert_eq!(
        gemini.to_string(),
        json!({
            "type": "object",
            "propertyOrdering": ["kind", "path", "url"],
            "properties": {
                "kind": {"type": "string", "enum": ["file", "url"]},
                "path": {},
                "url": {"type": "string", "description": "Where."}
            },
            "required": ["kind"]
        })
        .to_string()
    );
}

/// A recursive definition (a tree node): Anthropic and OpenAI keep the
/// reference; Gemini gets the node and its children, and below them a
/// node of the same type that says it is not described further.
#[test]
fn a_recursive_reference() {
    let schema = json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                }
            }
        }
    });
    let (anthropic, openai, gemini) = all(&schema);
    assert_eq!(anthropic, schema);
    assert_eq!(openai, schema);
    let cut = json!({"type": "object", "description": "Not described further: its schema nests too deeply."});
    let level = |children: Value| {
        json!({
            "type": "object",
            "propertyOrdering": ["name", "children"],
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": children}
            }
        })
    };
    assert_eq!(
        gemini.to_string(),
        json!({
            "type": "object",
            "properties": {"root": level(level(cut))}
        })
        .to_string()
    );
}

/// An `allOf` of two objects (a model extending another): one object.
#[test]
fn an_all_of_two_objects() {
    let schema = json!({
        "allOf": [
            {
                "type": "object",
                "properties": {"query": {"type": "string", "maxLength": 100}, "limit": {"type": "integer"}},
                "required": ["query"]
            },
            {
                "type": "object",
                "properties": {"query": {"type": "string", "minLength": 1}, "page": {"type": "integer", "minimum": 1}},
                "required": ["page"]
            }
        ]
    });
    let (anthropic, openai, gemini) = all(&schema);
    let flat = json!({
        "type": "object",
        "properties": {
            "query": {"allOf": [{"type": "string", "maxLength": 100}, {"type": "string", "minLength": 1}]},
            "limit": {"type": "integer"},
            "page": {"type": "integer", "minimum": 1}
        },
        "required": ["query", "page"]
    });
    assert_eq!(anthropic.to_string(), flat.to_string());
    assert_eq!(openai.to_string(), flat.to_string());
    assert_eq!(
        gemini.to_string(),
        json!({
            "type": "object",
            "propertyOrdering": ["query", "limit", "page"],
            "properties": {
                "query": {"type": "string", "maxLength": 100, "minLength": 1},
                "limit": {"type": "integer"},
                "page": {"type": "integer", "minimum": 1}
            },
            "required": ["query", "page"]
        })
        .to_string()
    );
}

/// A root that is a `$ref` (some servers name their argument model): the
/// model merged into the root, its definitions kept for the others.
#[test]
fn a_root_reference() {
    let schema = json!({
        "$ref": "#/$defs/Args",
        "$defs": {
            "Args": {"type": "object", "properties": {"tag": {"$ref": "#/$defs/Tag"}}, "required": ["tag"]},
            "Tag": {"type": "string", "enum": ["a", "b"]}
        }
    });
    let (anthropic, openai, gemini) = all(&schema);
    let flat = json!({
        "type": "object",
        "$defs": schema["$defs"],
        "properties": {"tag": {"$ref": "#/$defs/Tag"}},
        "required": ["tag"]
    });
    assert_eq!(anthropic.to_string(), flat.to_string());
    assert_eq!(openai.to_string(), flat.to_string());
    assert_eq!(
        gemini.to_string(),
        json!({
            "type": "object",
            "properties": {"tag": {"type": "string", "enum": ["a", "b"]}},
            "required": ["tag"]
        })
        .to_string()
    );
}

/// A `$ref` that points nowhere (remote, or into a removed branch) is left
/// out rather than sent to be refused.
#[test]
fn a_dangling_reference_is_dropped() {
    let schema = json!({
        "type": "object",
        "properties": {
            "far": {"$ref": "https://example.com/schema.json", "description": "Remote."},
            "gone": {"$ref": "#/$defs/Missing"}
        }
    });
    let expected = json!({
        "type": "object",
        "properties": {"far": {"description": "Remote."}, "gone": {}}
    });
    let (anthropic, openai, gemini) = all(&schema);
    assert_eq!(anthropic, expected);
    assert_eq!(openai, expected);
    assert_eq!(
        gemini.to_string(),
        json!({
            "type": "object",
            "propertyOrdering": ["far", "gone"],
            "properties": {"far": {"description": "Remote."}, "gone": {}}
        })
        .to_string()
    );
}

/// OpenAI wants `properties` on the root, even when there are none.
#[test]
fn openai_roots_always_have_properties() {
    let schema = json!({"type": "object"});
    assert!(matches!(anthropic(&schema), Cow::Borrowed(_)));
    assert_eq!(
        openai(&schema).into_owned(),
        json!({"type": "object", "properties": {}})
    );
    assert_eq!(gemini(&schema), None);
}

/// A draft-04 boolean `exclusiveMinimum`, and draft-07 `dependencies`.
#[test]
fn older_drafts_keywords() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": true}},
        "dependencies": {"a": ["b"], "c": {"required": ["d"]}}
    });
    assert_eq!(
        anthropic(&schema).to_string(),
        json!({
            "type": "object",
            "properties": {"n": {"type": "number", "exclusiveMinimum": 0}},
            "dependentRequired": {"a": ["b"]},
            "dependentSchemas": {"c": {"required": ["d"]}}
        })
        .to_string()
    );
}

/// Definitions that each refer to the next twice: inlined in full they
/// would be 2^40 nodes. The budget bounds the work and the result.
#[test]
fn exponential_references_are_bounded() {
    let mut defs = Map::new();
    for level in 0..40 {
        let next = format!("#/$defs/D{}", level + 1);
        defs.insert(
            format!("D{level}"),
            json!({"type": "object", "properties": {"l": {"$ref": next}, "r": {"$ref": next}}}),
        );
    }
    defs.insert("D40".into(), json!({"type": "string"}));
    let schema =
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/D0"}}, "$defs": defs});
    let started = std::time::Instant::now();
    let gemini = Value::Object(gemini(&schema).unwrap());
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert!(gemini.to_string().len() < 8_000_000);
    assert!(!gemini.to_string().contains("$ref"));
}

/// A schema nested far deeper than any server writes: the walks stop at
/// their depth, and what lies below becomes `{}`.
#[test]
fn deep_nesting_is_bounded() {
    let mut schema = json!({"type": "string"});
    for _ in 0..200 {
        schema = json!({"type": "object", "anyOf": [{"properties": {"a": schema}}]});
    }
    let anthropic = anthropic(&schema).into_owned();
    let openai = openai(&schema).into_owned();
    let gemini = gemini(&schema).map(Value::Object);
    for out in [anthropic, openai] {
        assert_eq!(out["type"], "object");
        assert!(out.get("anyOf").is_none());
    }
    assert!(gemini.is_some());
}

/// References by `$anchor`, by an escaped pointer, to the root itself, and
/// to a subschema's `$id`: Gemini inlines each (the root's own reference is
/// cut after two levels); Anthropic keeps them, as they resolve.
#[test]
fn references_of_every_local_kind() {
    let schema = json!({
        "type": "object",
        "properties": {
            "by_anchor": {"$ref": "#flag"},
            "by_pointer": {"$ref": "#/$defs/a~1b%20c"},
            "by_id": {"$ref": "urn:jp:count"},
            "again": {"$ref": "#"}
        },
        "$defs": {
            "Flag": {"$anchor": "flag", "type": "boolean"},
            "a/b c": {"type": "string", "maxLength": 3},
            "Count": {"$id": "urn:jp:count", "type": "integer"}
        }
    });
    assert!(matches!(anthropic(&schema), Cow::Borrowed(_)));
    let gemini = Value::Object(gemini(&schema).unwrap());
    let properties = &gemini["properties"];
    assert_eq!(properties["by_anchor"], json!({"type": "boolean"}));
    assert_eq!(
        properties["by_pointer"],
        json!({"type": "string", "maxLength": 3})
    );
    assert_eq!(properties["by_id"], json!({"type": "integer"}));
    assert_eq!(properties["again"]["type"], "object");
    assert_eq!(
        properties["again"]["properties"]["again"]["properties"]["again"],
        json!({"type": "object", "description": "Not described further: its schema nests too deeply."})
    );
}

/// A root whose union nests in itself through `$ref: "#"` stops at the
/// flattening's depth rather than recursing.
#[test]
fn a_root_union_referring_to_itself() {
    let schema = json!({
        "anyOf": [
            {"$ref": "#"},
            {"type": "object", "properties": {"a": {"type": "string"}}}
        ]
    });
    let (anthropic, openai, gemini) = all(&schema);
    assert_eq!(anthropic["type"], "object");
    assert_eq!(openai["type"], "object");
    assert_eq!(gemini["type"], "object");
}

/// A root union whose many branches each refer to the root again: without
/// the flattening's budget the copies would multiply by 50 at each level.
#[test]
fn a_root_union_multiplying_itself_is_bounded() {
    let branches: Vec<Value> = (0..50).map(|_| json!({"$ref": "#"})).collect();
    let mut schema = json!({"anyOf": branches});
    schema["anyOf"][0] = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let started = std::time::Instant::now();
    let (anthropic, openai, gemini) = all(&schema);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(anthropic["type"], "object");
    assert_eq!(openai["type"], "object");
    assert_eq!(gemini["type"], "object");
}

/// Draft-07 details: nested `definitions` renamed with every pointer
/// through them, a node that has both spellings left as it is (its
/// pointers still resolve), and the constraints a draft-07 validator
/// ignores beside a `$ref` dropped rather than newly enforced.
#[test]
fn draft_07_definitions_and_reference_siblings() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "inner": {"$ref": "#/definitions/Outer/definitions/Inner", "type": "string", "description": "Kept."},
            "both": {"$ref": "#/properties/mixed/definitions/Old"},
            "mixed": {"$defs": {"New": {}}, "definitions": {"Old": {"type": "integer"}}}
        },
        "definitions": {
            "Outer": {"definitions": {"Inner": {"type": "number"}}}
        }
    });
    assert_eq!(
        anthropic(&schema).to_string(),
        json!({
            "type": "object",
            "properties": {
                "inner": {"$ref": "#/$defs/Outer/$defs/Inner", "description": "Kept."},
                "both": {"$ref": "#/properties/mixed/definitions/Old"},
                "mixed": {"$defs": {"New": {}}, "definitions": {"Old": {"type": "integer"}}}
            },
            "$defs": {
                "Outer": {"$defs": {"Inner": {"type": "number"}}}
            }
        })
        .to_string()
    );
}
