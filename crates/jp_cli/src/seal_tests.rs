use super::*;

#[test]
fn hmac_is_hmac_sha256() {
    // The values Python's `hmac.new(key, msg, hashlib.sha256)` gives.
    assert_eq!(
        hmac(&[0u8; 32], b""),
        "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"
    );
    assert_eq!(
        hmac(&[7u8; 32], b"jp"),
        "5c0dad30f6acfea32ade213b12a605ed0286a955894bfa32e1743a08696d735b"
    );
}

#[test]
fn hex_round_trips_and_rejects_what_is_not_a_key() {
    let key = [7u8; 32];
    assert_eq!(parse_hex(&hex(&key)), Some(key));
    assert_eq!(parse_hex("abc"), None);
    assert_eq!(parse_hex(&"zz".repeat(32)), None);
}
