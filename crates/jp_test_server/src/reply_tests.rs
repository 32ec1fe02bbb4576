use super::*;

fn lengths(split: &Split, len: usize) -> Vec<usize> {
    split.pieces(len).iter().map(Range::len).collect()
}

#[test]
fn whole_is_one_piece_and_empty_body_has_none() {
    assert_eq!(Split::Whole.pieces(7), vec![0..7]);
    assert_eq!(Split::Whole.pieces(0), Vec::<Range<usize>>::new());
    assert_eq!(Split::Every(3).pieces(0), Vec::<Range<usize>>::new());
    assert_eq!(
        Split::Random { seed: 1, max: 4 }.pieces(0),
        Vec::<Range<usize>>::new()
    );
}

#[test]
fn every_cuts_fixed_lengths_with_a_short_tail() {
    assert_eq!(Split::Every(3).pieces(7), vec![0..3, 3..6, 6..7]);
    assert_eq!(Split::Every(3).pieces(6), vec![0..3, 3..6]);
    assert_eq!(Split::Every(1).pieces(3), vec![0..1, 1..2, 2..3]);
    assert_eq!(Split::Every(10).pieces(4), vec![0..4]);
    assert_eq!(Split::Every(0).pieces(4), vec![0..4]);
}

#[test]
fn offsets_are_sorted_deduplicated_and_clamped() {
    let split = Split::Offsets(vec![5, 2, 2, 0, 9, 100]);
    assert_eq!(split.pieces(9), vec![0..2, 2..5, 5..9]);
    assert_eq!(Split::Offsets(vec![]).pieces(3), vec![0..3]);
}

#[test]
fn random_pieces_cover_the_body_within_bounds_and_repeat_per_seed() {
    for seed in [0, 1, 42, u64::MAX] {
        for max in [1, 2, 7, 64] {
            let split = Split::Random { seed, max };
            let pieces = split.pieces(1000);
            assert_eq!(pieces.first().map(|r| r.start), Some(0));
            assert_eq!(pieces.last().map(|r| r.end), Some(1000));
            assert!(pieces.windows(2).all(|w| w[0].end == w[1].start));
            assert!(pieces.iter().all(|r| (1..=max).contains(&r.len())));
            assert_eq!(split.pieces(1000), pieces);
        }
    }
    assert_eq!(lengths(&Split::Random { seed: 9, max: 1 }, 5), vec![1; 5]);
    assert_eq!(lengths(&Split::Random { seed: 9, max: 0 }, 3), vec![1; 3]);
    assert_ne!(
        Split::Random { seed: 1, max: 16 }.pieces(1000),
        Split::Random { seed: 2, max: 16 }.pieces(1000)
    );
    // Every length in 1..=max shows up over a long body: the generator is not stuck.
    let seen = lengths(&Split::Random { seed: 3, max: 8 }, 4000);
    for len in 1..=8 {
        assert!(seen.contains(&len), "length {len} never drawn");
    }
}

#[test]
fn path_matching_compares_the_path_and_requires_expected_query_pairs() {
    assert_eq!(path_mismatch("/v1/messages", "/v1/messages"), None);
    assert_eq!(
        path_mismatch("/v1/messages", "/v1/messages?beta=true"),
        None
    );
    assert_eq!(
        path_mismatch("/m:gen?alt=sse", "/m:gen?key=k&alt=sse"),
        None
    );
    assert_eq!(path_mismatch("/m:gen?", "/m:gen"), None);
    assert_eq!(
        path_mismatch("/m:gen?alt=sse", "/m:gen"),
        Some(r#"expected path "/m:gen?alt=sse", got "/m:gen""#.to_owned())
    );
    assert_eq!(
        path_mismatch("/m:gen?alt=sse", "/m:gen?alt=sse2"),
        Some(r#"expected path "/m:gen?alt=sse", got "/m:gen?alt=sse2""#.to_owned())
    );
    assert_eq!(
        path_mismatch("/v1/messages", "/v1/chat/completions"),
        Some(r#"expected path "/v1/messages", got "/v1/chat/completions""#.to_owned())
    );
}

#[test]
fn header_replaces_case_insensitively_and_appends_new_names() {
    let reply = Reply::sse("x")
        .header("Content-Type", "text/plain")
        .header("x-request-id", "abc");
    assert_eq!(
        reply.headers,
        vec![
            ("Content-Type".to_owned(), "text/plain".to_owned()),
            ("x-request-id".to_owned(), "abc".to_owned()),
        ]
    );
}

#[test]
fn constructors_set_status_content_type_and_defaults() {
    let reply = Reply::ndjson("{}\n");
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.headers,
        vec![("content-type".to_owned(), "application/x-ndjson".to_owned())]
    );
    assert_eq!(reply.body, b"{}\n".to_vec());
    assert_eq!(reply.split, Split::Whole);
    assert_eq!(reply.pace, Duration::ZERO);
    assert_eq!(reply.fault, None);
    assert_eq!(reply.expect_path, None);
    let reply = Reply::status(429, "application/json", "{}")
        .split(Split::Every(1))
        .pace(Duration::from_millis(3))
        .fault(Fault::StallAfter(1))
        .expect_path("/v1/messages");
    assert_eq!(reply.status, 429);
    assert_eq!(reply.split, Split::Every(1));
    assert_eq!(reply.pace, Duration::from_millis(3));
    assert_eq!(reply.fault, Some(Fault::StallAfter(1)));
    assert_eq!(reply.expect_path.as_deref(), Some("/v1/messages"));
}
