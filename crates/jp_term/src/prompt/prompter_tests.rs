use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Door {
    Open,
    Shut,
}

impl Answer for Door {
    const ALL: &'static [Self] = &[Self::Open, Self::Shut];

    fn key(self) -> char {
        match self {
            Self::Open => 'o',
            Self::Shut => 's',
        }
    }

    fn help(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Self::Open => "open it",
            Self::Shut => "shut it",
        })
    }
}

/// The choices come from the enum, and each key a prompt returns comes back
/// as its answer; a key that is none (a prompter's bug) is an error, never
/// some answer by default.
#[test]
fn answers_are_their_keys_and_back() {
    assert_eq!(
        Door::choices(Door::ALL),
        [
            Choice {
                key: 'o',
                help: Cow::Borrowed("open it"),
            },
            Choice {
                key: 's',
                help: Cow::Borrowed("shut it"),
            },
        ]
    );
    for door in Door::ALL {
        assert_eq!(Door::of(Ok(door.key())), Ok(*door));
    }
    assert_eq!(
        Door::of(Ok('x')),
        Err(PromptError::Terminal("`x` is not an answer offered".into()))
    );
    assert_eq!(
        Door::of(Err(PromptError::Interrupted)),
        Err(PromptError::Interrupted)
    );
}
