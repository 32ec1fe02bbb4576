//! Property tests of the dialects: on generated schemas (types, type
//! lists, unions, `allOf`, `enum`, `const`, `$defs` and `$ref`, a recursive
//! definition, nested objects and arrays, `required`, draft-07 or 2020-12)
//! every object the original accepts, each dialect accepts too, and each
//! dialect has the shape its provider wants.
//!
//! Gemini's subset is not JSON Schema; [`gemini_as_json_schema`] reads it
//! as Gemini documents it (`nullable` allows `null` as well) for the check.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

use super::super::{anthropic, gemini, openai};
use jp_config::tool::schema::walk::resolve;

/// The property names, few so that branches share some.
const NAMES: &[&str] = &["a", "b", "c", "d"];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("x")),
        Just(json!("")),
        Just(json!(1)),
        Just(json!(2.5)),
        Just(json!(true)),
        Just(Value::Null),
    ]
}

/// A schema with no reference (what `$defs.Leaf` holds).
fn plain_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "string"})),
        (0u64..3).prop_map(|n| json!({"type": "string", "minLength": n})),
        Just(json!({"type": "integer", "minimum": 0})),
        Just(json!({"type": "number"})),
        Just(json!({"type": "boolean"})),
        Just(json!({"type": "null"})),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"type": ["boolean", "string"]})),
        Just(json!({"type": ["integer", "string"], "description": "Either."})),
        prop::collection::vec(scalar(), 1..3).prop_map(|v| json!({"enum": v})),
        Just(json!({"type": "string", "enum": ["a", "b"]})),
        scalar().prop_map(|v| json!({"const": v})),
        Just(json!({})),
        Just(json!({"type": "string", "pattern": "^x", "format": "date"})),
        Just(json!({"type": "integer", "maximum": 5, "exclusiveMinimum": -1, "multipleOf": 1})),
        Just(json!({"not": {"type": "string"}})),
        Just(
            json!({"if": {"type": "string"}, "then": {"minLength": 1}, "else": {"type": "integer"}})
        ),
        Just(json!(true)),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => plain_leaf(),
        1 => Just(json!({"$ref": "#/$defs/Leaf"})),
        1 => Just(json!({"$ref": "#/$defs/Obj"})),
        1 => Just(json!({"$ref": "#/$defs/Tree"})),
        1 => Just(json!({"$ref": "#/$defs/Obj", "description": "Beside a reference."})),
        1 => Just(json!({"$ref": "#/$defs/Leaf", "minLength": 1})),
    ]
}

/// An object schema whose properties come from `inner`.
fn object(inner: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    (
        prop::collection::vec((0..NAMES.len(), inner, any::<bool>()), 0..4),
        0..4u8,
        any::<bool>(),
    )
        .prop_map(|(entries, rest, typed)| {
            let mut properties = Map::new();
            let mut required = Vec::new();
            for (index, schema, needed) in entries {
                let name = NAMES[index];
                if properties.contains_key(name) {
                    continue;
                }
                properties.insert(name.to_owned(), schema);
                if needed {
                    required.push(Value::from(name));
                }
            }
            let mut map = Map::new();
            if typed {
                map.insert("type".into(), "object".into());
            }
            map.insert("properties".into(), properties.into());
            if !required.is_empty() {
                map.insert("required".into(), required.into());
            }
            match rest {
                0 => {
                    map.insert("additionalProperties".into(), false.into());
                }
                1 => {
                    map.insert("additionalProperties".into(), json!({"type": "string"}));
                }
                2 => {
                    map.insert(
                        "patternProperties".into(),
                        json!({"^x": {"type": "integer"}}),
                    );
                }
                _ => {}
            }
            Value::Object(map)
        })
}

fn node() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            object(inner.clone()),
            inner
                .clone()
                .prop_map(|items| json!({"type": "array", "items": items})),
            inner
                .clone()
                .prop_map(|i| json!({"anyOf": [i, {"type": "null"}], "default": null})),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| json!({"anyOf": v})),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| json!({"oneOf": v})),
            (object(inner.clone()), object(inner.clone()))
                .prop_map(|(a, b)| json!({"allOf": [a, b]})),
            (
                prop::collection::vec(inner.clone(), 1..3),
                prop_oneof![inner.prop_map(Some), Just(None)]
            )
                .prop_map(|(prefix, rest)| json!({
                    "type": "array",
                    "prefixItems": prefix,
                    "items": rest.unwrap_or(Value::Bool(false))
                })),
        ]
    })
}

/// A whole tool schema: an object, or a root `anyOf` or `allOf` of objects,
/// with its definitions; in draft-07 spelling half the time.
fn tool_schema() -> impl Strategy<Value = Value> {
    let root = prop_oneof![
        2 => object(node()),
        1 => prop::collection::vec(object(node()), 2..4).prop_map(|v| json!({"anyOf": v})),
        1 => prop::collection::vec(object(node()), 2..3).prop_map(|v| json!({"allOf": v})),
        1 => (object(node()), prop::collection::vec(object(node()), 2..3)).prop_map(|(mut own, v)| {
            own["anyOf"] = v.into();
            own
        }),
        1 => Just(json!({"$ref": "#/$defs/Obj"})),
    ];
    (root, plain_leaf(), object(plain_leaf()), any::<bool>()).prop_map(
        |(mut root, leaf, obj, draft_07)| {
            root["$defs"] = json!({
                "Leaf": leaf,
                "Obj": obj,
                "Tree": {
                    "type": "object",
                    "properties": {
                        "v": {"type": "integer"},
                        "kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
                    }
                }
            });
            if !draft_07 {
                return root;
            }
            let text = draft_07_items(root)
                .to_string()
                .replace("\"$defs\":", "\"definitions\":")
                .replace("#/$defs/", "#/definitions/");
            let mut root: Value = serde_json::from_str(&text).unwrap();
            root["$schema"] = json!("http://json-schema.org/draft-07/schema#");
            root
        },
    )
}

/// `schema` with 2020-12's tuples in draft-07's spelling: `prefixItems`
/// to `items`, `items` to `additionalItems`.
fn draft_07_items(schema: Value) -> Value {
    match schema {
        Value::Object(map) => {
            let tuple = map.contains_key("prefixItems");
            map.into_iter()
                .map(|(key, value)| {
                    let key = match key.as_str() {
                        "prefixItems" => "items".to_owned(),
                        "items" if tuple => "additionalItems".to_owned(),
                        _ => key,
                    };
                    (key, draft_07_items(value))
                })
                .collect::<Map<_, _>>()
                .into()
        }
        Value::Array(list) => list.into_iter().map(draft_07_items).collect(),
        other => other,
    }
}

/// A small deterministic generator for the instances.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % n as u64).unwrap()
    }

    fn pick(&mut self, values: &[Value]) -> Value {
        values[self.below(values.len())].clone()
    }

    fn scalar(&mut self) -> Value {
        self.pick(&[json!("x"), json!(3), json!(-1.5), json!(false), Value::Null])
    }
}

/// A value meant to fit `schema` (some do not: the caller keeps those the
/// original accepts), with some noise where a schema leaves room.
fn sample(root: &Value, schema: &Value, rng: &mut Rng, depth: usize) -> Value {
    let Some(map) = schema.as_object() else {
        return rng.scalar();
    };
    if depth > 6 || rng.below(10) == 0 {
        return rng.scalar();
    }
    if let Some(target) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
    {
        return sample(root, target, rng, depth + 1);
    }
    if let Some(value) = map.get("const") {
        return value.clone();
    }
    if let Some(values) = map.get("enum").and_then(Value::as_array) {
        return rng.pick(values);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = map.get(key).and_then(Value::as_array) {
            let branch = &branches[rng.below(branches.len())];
            return sample(root, branch, rng, depth + 1);
        }
    }
    if let Some(branches) = map.get("allOf").and_then(Value::as_array) {
        let mut merged = Map::new();
        for branch in branches {
            if let Value::Object(part) = sample(root, branch, rng, depth + 1) {
                for (key, value) in part {
                    merged.entry(key).or_insert(value);
                }
            }
        }
        return Value::Object(merged);
    }
    let kinds: Vec<Value> = match map.get("type") {
        Some(Value::Array(kinds)) => kinds.clone(),
        Some(kind) => vec![kind.clone()],
        None if map.contains_key("properties") => vec![json!("object")],
        None => return rng.scalar(),
    };
    match rng.pick(&kinds).as_str() {
        Some("string") => rng.pick(&[json!(""), json!("x"), json!("hello")]),
        Some("integer") => rng.pick(&[json!(0), json!(1), json!(7), json!(-1)]),
        Some("number") => rng.pick(&[json!(0.5), json!(3), json!(-2.5)]),
        Some("boolean") => rng.pick(&[json!(true), json!(false)]),
        Some("object") => sample_object(root, map, rng, depth),
        Some("array") => {
            let prefix = map
                .get("prefixItems")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let items = map.get("items").cloned().unwrap_or_default();
            let len = prefix.len() + rng.below(3);
            (0..len)
                .map(|i| sample(root, prefix.get(i).unwrap_or(&items), rng, depth + 1))
                .collect::<Vec<_>>()
                .into()
        }
        _ => Value::Null,
    }
}

fn sample_object(root: &Value, map: &Map<String, Value>, rng: &mut Rng, depth: usize) -> Value {
    let required = map.get("required").and_then(Value::as_array);
    let mut out = Map::new();
    for (name, schema) in map
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let needed = required.is_some_and(|r| r.iter().any(|n| n == name));
        if needed || rng.below(2) == 0 {
            out.insert(name.clone(), sample(root, schema, rng, depth + 1));
        }
    }
    match rng.below(5) {
        0 => {
            out.insert(NAMES[rng.below(NAMES.len())].to_owned(), rng.scalar());
        }
        1 => {
            let extra = map.get("additionalProperties").cloned().unwrap_or_default();
            out.insert("extra".into(), sample(root, &extra, rng, depth + 1));
        }
        2 => {
            out.insert("x1".into(), rng.pick(&[json!(2), json!("x")]));
        }
        _ => {}
    }
    Value::Object(out)
}

/// Gemini's `Schema` read as JSON Schema: `nullable` also allows `null`;
/// `propertyOrdering` and `example` say nothing about validity.
fn gemini_as_json_schema(node: &Value) -> Value {
    let Some(map) = node.as_object() else {
        return node.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        let converted = match key.as_str() {
            "propertyOrdering" | "example" | "nullable" => continue,
            "properties" => Value::Object(
                value
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(name, schema)| (name.clone(), gemini_as_json_schema(schema)))
                    .collect(),
            ),
            "items" => gemini_as_json_schema(value),
            "anyOf" => value
                .as_array()
                .unwrap()
                .iter()
                .map(gemini_as_json_schema)
                .collect(),
            _ => value.clone(),
        };
        out.insert(key.clone(), converted);
    }
    if map.get("nullable") == Some(&Value::Bool(true)) {
        return json!({"anyOf": [out, {"type": "null"}]});
    }
    Value::Object(out)
}

/// Fails unless every node of Gemini's `node` is one Gemini reads: known
/// keys, one type, and `items` on every array.
fn assert_gemini_shape(node: &Value) {
    let map = node.as_object().expect("a Gemini schema node is an object");
    for key in map.keys() {
        assert!(
            crate::provider::google::schema::KNOWN.contains(&key.as_str()),
            "Gemini does not know {key:?} in {node}"
        );
    }
    if let Some(kind) = map.get("type") {
        assert!(kind.is_string(), "one type: {node}");
        assert!(
            kind != "array" || map.contains_key("items"),
            "items: {node}"
        );
    }
    for child in map
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(Map::values)
    {
        assert_gemini_shape(child);
    }
    for child in map
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        assert_gemini_shape(child);
    }
    if let Some(items) = map.get("items") {
        assert_gemini_shape(items);
    }
}

/// Fails unless `out` has the root Anthropic and OpenAI want.
fn assert_object_root(out: &Value) {
    assert_eq!(out["type"], "object", "{out}");
    for key in [
        "anyOf", "oneOf", "allOf", "not", "enum", "const", "$ref", "$schema",
    ] {
        assert!(out.get(key).is_none(), "root {key} in {out}");
    }
    assert!(!out.to_string().contains("definitions"), "{out}");
}

/// A validator for `schema` that asserts `format`. The jsonschema crate
/// asserts it by default for draft-07 and not for 2020-12 (where it is an
/// annotation); the original and its dialects must be read alike, or a
/// `format` under a `oneOf` would seem to change meaning with the draft.
fn validator(
    schema: &Value,
) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
}

/// Checks the dialects of `schema` on 24 instances; returns how many of
/// them the original accepted.
fn check(schema: &Value, seed: u64) -> usize {
    let original = validator(schema).expect("the grammar writes valid schemas");
    let anthropic = anthropic(schema).into_owned();
    let openai = openai(schema).into_owned();
    assert_object_root(&anthropic);
    assert_object_root(&openai);
    let gemini = gemini(schema).map_or_else(|| json!({"type": "object"}), Value::Object);
    assert_gemini_shape(&gemini);
    let gemini_json = gemini_as_json_schema(&gemini);
    let dialects = [
        ("anthropic", &anthropic),
        ("openai", &openai),
        ("gemini", &gemini_json),
    ]
    .map(|(name, sent)| (name, sent, validator(sent).expect("valid 2020-12")));
    let mut rng = Rng(seed | 1);
    let mut accepted = 0;
    for _ in 0..24 {
        let instance = sample(schema, schema, &mut rng, 0);
        if !instance.is_object() || !original.is_valid(&instance) {
            continue;
        }
        accepted += 1;
        for (name, sent, validator) in &dialects {
            assert!(
                validator.is_valid(&instance),
                "{name} refuses {instance}, which {schema} accepts; sent: {sent}"
            );
        }
    }
    accepted
}

proptest! {
    #![proptest_config(Config::with_cases(96))]

    #[test]
    fn every_dialect_accepts_what_the_original_accepts(schema in tool_schema(), seed in any::<u64>()) {
        check(&schema, seed);
    }
}

/// The property above is not vacuous: most generated schemas accept some
/// of the generated instances.
#[test]
fn the_generated_instances_are_mostly_accepted() {
    let mut runner = TestRunner::deterministic();
    let strategy = tool_schema();
    let mut schemas_with_some = 0;
    for seed in 0..64u64 {
        let schema = strategy.new_tree(&mut runner).unwrap().current();
        if check(&schema, seed) > 0 {
            schemas_with_some += 1;
        }
    }
    assert!(schemas_with_some >= 40, "only {schemas_with_some} of 64");
}
