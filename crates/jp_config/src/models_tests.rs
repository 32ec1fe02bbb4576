use super::*;

fn price(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Price {
    Price {
        input,
        output,
        cache_read,
        cache_write,
    }
}

#[test]
fn a_builtin_model_has_its_price_and_window() {
    let info = ModelInfo::resolve("anthropic", "claude-sonnet-4-5", None);
    assert_eq!(
        info,
        ModelInfo {
            price: Some(price(3.0, 15.0, 0.3, 3.75)),
            context_window: Some(200_000),
            reasoning: false,
        }
    );
}

#[test]
fn openais_reasoning_models_reason_and_config_can_say_so_of_others() {
    assert!(ModelInfo::resolve("openai", "o4-mini", None).reasoning);
    assert!(!ModelInfo::resolve("openai", "gpt-4.1", None).reasoning);
    let says = ModelInfoConfig {
        reasoning: Some(true),
        ..ModelInfoConfig::default()
    };
    assert!(ModelInfo::resolve("openai", "o9", Some(&says)).reasoning);
    let denies = ModelInfoConfig {
        reasoning: Some(false),
        ..ModelInfoConfig::default()
    };
    assert!(!ModelInfo::resolve("openai", "o3", Some(&denies)).reasoning);
}

#[test]
fn an_unknown_model_has_no_price_and_no_window() {
    assert_eq!(
        ModelInfo::resolve("anthropic", "claude-opus-5", None),
        ModelInfo::default()
    );
    // The same name under another provider is another model.
    assert_eq!(
        ModelInfo::resolve("openrouter", "claude-sonnet-4-5", None),
        ModelInfo::default()
    );
}

#[test]
fn config_overrides_field_by_field() {
    let configured = ModelInfoConfig {
        price: Some(PriceConfig {
            input: Some(2.5),
            ..PriceConfig::default()
        }),
        context_window: None,
        reasoning: None,
    };
    let info = ModelInfo::resolve("anthropic", "claude-sonnet-4-5", Some(&configured));
    assert_eq!(info.price, Some(price(2.5, 15.0, 0.3, 3.75)));
    assert_eq!(info.context_window, Some(200_000));
}

#[test]
fn a_configured_model_needs_input_and_output_prices_and_cache_prices_default_to_input() {
    let only_input = ModelInfoConfig {
        price: Some(PriceConfig {
            input: Some(1.0),
            ..PriceConfig::default()
        }),
        context_window: Some(32_768),
        reasoning: None,
    };
    let info = ModelInfo::resolve("ollama", "qwen3:8b", Some(&only_input));
    assert_eq!(info.price, None, "no output price: no cost is shown");
    assert_eq!(info.context_window, Some(32_768));

    let both = ModelInfoConfig {
        price: Some(PriceConfig {
            input: Some(1.0),
            output: Some(2.0),
            ..PriceConfig::default()
        }),
        context_window: None,
        reasoning: None,
    };
    let info = ModelInfo::resolve("ollama", "qwen3:8b", Some(&both));
    assert_eq!(info.price, Some(price(1.0, 2.0, 1.0, 1.0)));
}

#[test]
fn cost_bills_cached_and_written_tokens_at_their_prices() {
    let sonnet = price(3.0, 15.0, 0.3, 3.75);
    // 10,000 input of which 6,000 read and 2,000 written; 1,000 output.
    let tokens = Tokens {
        input: 10_000,
        cache_read: 6_000,
        cache_write: 2_000,
        output: 1_000,
    };
    let expected = (2_000.0 * 3.0 + 6_000.0 * 0.3 + 2_000.0 * 3.75 + 1_000.0 * 15.0) / 1e6;
    assert!((sonnet.cost(tokens) - expected).abs() < 1e-12);
    assert!((expected - 0.0303).abs() < 1e-12);
    // Counts that do not add up (more cached than input) never go negative.
    let odd = Tokens {
        input: 10,
        cache_read: 100,
        cache_write: 0,
        output: 0,
    };
    assert!((sonnet.cost(odd) - 100.0 * 0.3 / 1e6).abs() < 1e-15);
}

#[test]
fn every_builtin_row_is_complete_and_valid() {
    let rows: Vec<_> = builtin_rows().collect();
    assert_eq!(rows.len(), BUILTIN.len());
    let table: ModelsConfig = rows
        .iter()
        .map(|(_, name, info)| ((*name).to_owned(), info.clone()))
        .collect();
    assert_eq!(check(&table), Vec::new());
    for (provider, name, _) in rows {
        let info = ModelInfo::resolve(provider, name, None);
        assert!(info.price.is_some(), "{provider}/{name}");
        assert!(info.context_window.is_some(), "{provider}/{name}");
    }
}

#[test]
fn check_names_bad_prices_and_windows() {
    let mut models = ModelsConfig::new();
    models.insert(
        "m".into(),
        ModelInfoConfig {
            price: Some(PriceConfig {
                input: Some(-1.0),
                output: Some(f64::NAN),
                ..PriceConfig::default()
            }),
            context_window: Some(0),
            reasoning: None,
        },
    );
    let fields: Vec<_> = check(&models)
        .into_iter()
        .map(|p| format!("{}.{}: {}", p.model, p.field, p.message))
        .collect();
    assert_eq!(
        fields,
        [
            "m.price.input: must be a price in US dollars per million tokens, 0 or more, found -1",
            "m.price.output: must be a price in US dollars per million tokens, 0 or more, found NaN",
            "m.context_window: must be at least 1 (the most tokens the model reads)",
        ]
    );
}
