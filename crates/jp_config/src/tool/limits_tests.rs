#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use super::*;
use crate::tool::{
    DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_SECS, DEFAULTS_KEY,
    ToolConfig,
};

fn tools(entries: &[(&str, ToolConfig)]) -> IndexMap<String, ToolConfig> {
    entries
        .iter()
        .map(|(name, cfg)| ((*name).to_owned(), cfg.clone()))
        .collect()
}

#[test]
fn a_limit_names_the_key_that_set_it() {
    let own = ToolConfig {
        timeout_secs: Some(5),
        ..ToolConfig::default()
    };
    let defaults = ToolConfig {
        max_output_bytes: Some(10),
        max_argument_bytes: Some(20),
        ..ToolConfig::default()
    };
    let tools = tools(&[("slow", own), (DEFAULTS_KEY, defaults)]);
    assert_eq!(
        run_limits(&tools, "slow"),
        RunLimits {
            timeout: Duration::from_secs(5),
            timeout_key: "conversation.tools.slow.timeout_secs".into(),
            max_output_bytes: 10,
            max_output_key: "conversation.tools.'*'.max_output_bytes".into(),
        }
    );
    assert_eq!(
        argument_limit(&tools, "slow"),
        ArgumentLimit {
            bytes: 20,
            key: "conversation.tools.'*'.max_argument_bytes".into(),
        }
    );
}

#[test]
fn a_default_limit_names_the_tools_own_key() {
    let tools = tools(&[("my-tool", ToolConfig::default())]);
    assert_eq!(
        run_limits(&tools, "my-tool"),
        RunLimits {
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            timeout_key: "conversation.tools.my-tool.timeout_secs".into(),
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            max_output_key: "conversation.tools.my-tool.max_output_bytes".into(),
        }
    );
    assert_eq!(
        argument_limit(&tools, "my-tool"),
        ArgumentLimit {
            bytes: DEFAULT_MAX_ARGUMENT_BYTES,
            key: "conversation.tools.my-tool.max_argument_bytes".into(),
        }
    );
}
