use super::*;

#[test]
fn thousands_are_separated() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1000), "1,000");
    assert_eq!(thousands(48_894), "48,894");
    assert_eq!(thousands(1_234_567), "1,234,567");
}
