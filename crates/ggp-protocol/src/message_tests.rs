use proptest::prelude::*;

use super::*;

/// The START message of Appendix B (the maze game), as the specification prints it.
const APPENDIX_B_START: &str = "(START MATCH.3316980891 ROBOT
((ROLE ROBOT) (INIT (CELL A)) (INIT (GOLD C)) (INIT (STEP 1))
(<= (NEXT (CELL ?Y)) (DOES ROBOT MOVE) (TRUE (CELL ?X))
(ADJACENT ?X ?Y)) (<= (NEXT (CELL ?X)) (DOES ROBOT GRAB)
(TRUE (CELL ?X))) (<= (NEXT (CELL ?X)) (DOES ROBOT DROP)
(TRUE (CELL ?X))) (<= (NEXT (GOLD ?X)) (DOES ROBOT MOVE)
(TRUE (GOLD ?X))) (<= (NEXT (GOLD I)) (DOES ROBOT GRAB)
(TRUE (CELL ?X)) (TRUE (GOLD ?X))) (<= (NEXT (GOLD I))
(DOES ROBOT GRAB) (TRUE (GOLD I)))
(<= (NEXT (GOLD ?Y)) (DOES ROBOT GRAB) (TRUE (CELL ?X))
(TRUE (GOLD ?Y)) (DISTINCT ?X ?Y)) (<= (NEXT (GOLD ?X))
(DOES ROBOT DROP) (TRUE (CELL ?X)) (TRUE (GOLD I)))
(<= (NEXT (GOLD ?X)) (DOES ROBOT DROP) (TRUE (GOLD ?X))
(DISTINCT ?X I)) (<= (NEXT (STEP ?Y)) (TRUE (STEP ?X))
(SUCC ?X ?Y)) (ADJACENT A B) (ADJACENT B C) (ADJACENT C D)
(ADJACENT D A) (SUCC 1 2) (SUCC 2 3) (SUCC 3 4) (SUCC 4 5)
(SUCC 5 6) (SUCC 6 7) (SUCC 7 8) (SUCC 8 9) (SUCC 9 10)
(<= (LEGAL ROBOT MOVE)) (<= (LEGAL ROBOT GRAB)
(TRUE (CELL ?X)) (TRUE (GOLD ?X))) (<= (LEGAL ROBOT DROP)
(TRUE (GOLD I))) (<= (GOAL ROBOT 100) (TRUE (GOLD A)))
(<= (GOAL ROBOT 0) (TRUE (GOLD ?X)) (DISTINCT ?X A))
(<= TERMINAL (TRUE (STEP 10))) (<= TERMINAL (TRUE (GOLD A))))
30 30)";

#[test]
fn the_appendix_b_start_message() {
    let Request::Start(start) = Request::parse(APPENDIX_B_START).unwrap() else {
        panic!("a START");
    };
    assert_eq!(start.match_id, "MATCH.3316980891");
    assert_eq!(start.role, "ROBOT");
    assert_eq!((start.start_clock, start.play_clock), (30, 30));
    assert!(start.rules.starts_with("(ROLE ROBOT) (INIT (CELL A))"));
    assert!(start.rules.ends_with("(<= TERMINAL (TRUE (GOLD A)))"));
    // The rules are a game description the checker reads without an error.
    let parsed = gdl_syntax::parse(&start.rules);
    assert!(
        parsed.diagnostics.iter().all(|d| !d.is_error()),
        "{:?}",
        parsed.diagnostics
    );
}

#[test]
fn the_appendix_b_play_and_stop_messages() {
    assert_eq!(
        Request::parse("(PLAY MATCH.3316980891 NIL)").unwrap(),
        Request::Play {
            match_id: "MATCH.3316980891".into(),
            moves: None
        }
    );
    assert_eq!(
        Request::parse("(PLAY MATCH.3316980891 (MOVE))").unwrap(),
        Request::Play {
            match_id: "MATCH.3316980891".into(),
            moves: Some(vec!["MOVE".into()])
        }
    );
    let play = Request::parse("(PLAY MATCH.3316980892 ((MARK 2 2) NOOP))").unwrap();
    assert_eq!(
        play,
        Request::Play {
            match_id: "MATCH.3316980892".into(),
            moves: Some(vec!["(MARK 2 2)".into(), "NOOP".into()])
        }
    );
    // Printed exactly as the specification shows it, with the length its header gives.
    assert_eq!(
        play.to_string(),
        "(PLAY MATCH.3316980892 ((MARK 2 2) NOOP))"
    );
    assert_eq!(play.to_string().len(), 41);
    assert_eq!(
        Request::parse("(PLAY MATCH.3316980891 NIL)")
            .unwrap()
            .to_string()
            .len(),
        27
    );
    assert_eq!(
        Request::parse("(STOP MATCH.3316980891 (MOVE))")
            .unwrap()
            .to_string(),
        "(STOP MATCH.3316980891 (MOVE))"
    );
}

#[test]
fn requests_are_read_liberally() {
    // Lower case, any whitespace, ggp-base's match ids.
    let r = Request::parse("\r\n ( play\tBase.ticTacToe.1234 \n nil ) \n").unwrap();
    assert_eq!(
        r,
        Request::Play {
            match_id: "Base.ticTacToe.1234".into(),
            moves: None
        }
    );
    let r = Request::parse("(stop m ( ( mark  1\n1 )  noop ))").unwrap();
    assert_eq!(
        r,
        Request::Stop {
            match_id: "m".into(),
            moves: Some(vec!["( mark 1 1 )".into(), "noop".into()])
        }
    );
    assert_eq!(Request::parse("(info)").unwrap(), Request::Info);
    assert_eq!(
        Request::parse("(ABORT m.1)").unwrap(),
        Request::Abort {
            match_id: "m.1".into()
        }
    );
    assert_eq!(
        Request::parse("(preview ((role a)) 20)").unwrap(),
        Request::Preview {
            rules: "(role a)".into(),
            preview_clock: 20
        }
    );
    assert_eq!(
        Request::parse("(START m (p) ((role (p))) 1 2)")
            .unwrap()
            .match_id(),
        Some("m")
    );
}

#[test]
fn malformed_requests_say_what_and_where() {
    let cases = [
        ("", "the message is empty", 0),
        ("PLAY m NIL", "a request is a list", 0),
        ("(PLAY m NIL) (PLAY m NIL)", "more than one form", 13),
        ("(PLAY m NIL", "unclosed", 0),
        ("()", "`()` is not a request", 0),
        ("(DANCE m)", "unknown command `DANCE`", 1),
        ("(PLAY m)", "PLAY takes 2 arguments", 7),
        ("(PLAY m NIL extra)", "PLAY takes 2 arguments", 12),
        ("(PLAY (m) NIL)", "expected a match id, found `(m)`", 6),
        ("(PLAY m nothing)", "expected NIL or a list of moves", 8),
        (
            "(START m r ((role r)) ten 10)",
            "the start clock must be a whole number",
            22,
        ),
        ("(START m r role 10 10)", "expected the rules as a list", 11),
        ("(INFO now)", "INFO takes 0 arguments", 6),
    ];
    for (text, message, offset) in cases {
        let e = Request::parse(text).unwrap_err();
        assert!(e.message.contains(message), "{text}: {e}");
        assert_eq!(e.offset, offset, "{text}: {e}");
    }
}

#[test]
fn replies() {
    assert_eq!(Reply::Ready.to_string(), "READY");
    assert_eq!(Reply::Done.to_string(), "DONE");
    let info = InfoReply {
        name: Some("ggp-random".into()),
        status: Some("available".into()),
        other: vec![],
    };
    assert_eq!(
        Reply::Info(info.clone()).to_string(),
        "((name ggp-random) (status available))"
    );
    assert_eq!(
        InfoReply::parse("((NAME ggp-random) (Status AVAILABLE))").unwrap(),
        info
    );
    assert_eq!(
        InfoReply::parse("busy").unwrap(),
        InfoReply {
            status: Some("busy".into()),
            ..InfoReply::default()
        }
    );
    assert_eq!(
        InfoReply::parse("((species alien) (name x y))")
            .unwrap()
            .other,
        [("species".to_string(), "alien".to_string())]
    );
    assert!(InfoReply::parse("((name))").is_err());
}

#[test]
fn replies_are_read_for_the_request_they_answer() {
    let start = Request::parse(APPENDIX_B_START).unwrap();
    let play = Request::parse("(PLAY m NIL)").unwrap();
    let stop = Request::parse("(STOP m (drop))").unwrap();
    let abort = Request::parse("(ABORT m)").unwrap();
    let preview = Request::parse("(PREVIEW ((role a)) 5)").unwrap();
    // Appendix B's replies, and the same in other cases and with whitespace.
    assert_eq!(Reply::parse_for(&start, "READY").unwrap(), Reply::Ready);
    assert_eq!(
        Reply::parse_for(&start, " ready\r\n").unwrap(),
        Reply::Ready
    );
    assert_eq!(Reply::parse_for(&start, "busy").unwrap(), Reply::Busy);
    assert_eq!(Reply::parse_for(&preview, "Ready").unwrap(), Reply::Ready);
    assert_eq!(
        Reply::parse_for(&play, "MOVE").unwrap(),
        Reply::Move("MOVE".into())
    );
    assert_eq!(
        Reply::parse_for(&play, "(MARK  2\n2)").unwrap(),
        Reply::Move("(MARK 2 2)".into())
    );
    assert_eq!(Reply::parse_for(&stop, "DONE").unwrap(), Reply::Done);
    assert_eq!(Reply::parse_for(&abort, "aborted").unwrap(), Reply::Aborted);
    assert_eq!(
        Reply::parse_for(&Request::Info, "BUSY").unwrap(),
        Reply::Busy
    );
    assert_eq!(
        Reply::parse_for(&Request::Info, "((name p) (status available))").unwrap(),
        Reply::Info(InfoReply {
            name: Some("p".into()),
            status: Some("available".into()),
            other: vec![],
        })
    );
    // Every reply prints back as it reads.
    for (request, reply) in [
        (&start, Reply::Ready),
        (&stop, Reply::Done),
        (&abort, Reply::Aborted),
        (&play, Reply::Move("(mark 1 1)".into())),
    ] {
        assert_eq!(
            Reply::parse_for(request, &reply.to_string()).unwrap(),
            reply
        );
    }
    // The wrong reply says what was expected.
    let cases = [
        (&start, "DONE", "expected READY, found `DONE`", 0),
        (&stop, "  READY", "expected DONE, found `READY`", 2),
        (&abort, "DONE", "expected ABORTED", 0),
        (&play, "", "expected a move (one term)", 0),
        (&play, "(mark 1", "expected a move (one term)", 0),
        (&play, "a b", "expected a move (one term), found `a b`", 0),
    ];
    for (request, text, message, offset) in cases {
        let e = Reply::parse_for(request, text).unwrap_err();
        assert!(e.message.contains(message), "{text}: {e}");
        assert_eq!(e.offset, offset, "{text}: {e}");
    }
    assert!(Reply::parse_for(&Request::Info, "((name))").is_err());
}

#[test]
fn move_replies_and_what_they_may_mean() {
    assert_eq!(move_candidates("(MARK 2 2)").unwrap(), ["(MARK 2 2)"]);
    assert_eq!(move_candidates("  MOVE\r\n").unwrap(), ["MOVE"]);
    assert_eq!(
        move_candidates("((mark 2 2))").unwrap(),
        ["((mark 2 2))", "(mark 2 2)"]
    );
    assert_eq!(move_candidates("(noop)").unwrap(), ["(noop)", "noop"]);
    assert_eq!(move_candidates(""), None);
    assert_eq!(move_candidates("a b"), None);
    assert_eq!(move_candidates("(mark 1"), None);
    assert_eq!(move_candidates("?x"), None);
}

fn term() -> impl Strategy<Value = String> {
    let atom = "[a-z][a-z0-9_.+-]{0,6}".prop_map(String::from);
    atom.prop_recursive(3, 12, 4, |inner| {
        ("[a-z][a-z0-9]{0,4}", prop::collection::vec(inner, 1..4))
            .prop_map(|(f, args)| format!("({f} {})", args.join(" ")))
    })
}

fn request() -> impl Strategy<Value = Request> {
    let id = "[A-Za-z][A-Za-z0-9.]{0,12}";
    let moves = || prop::option::of(prop::collection::vec(term(), 1..4));
    prop_oneof![
        (
            id,
            term(),
            prop::collection::vec(term(), 0..5),
            0u64..1000,
            0u64..1000
        )
            .prop_map(|(match_id, role, rules, start_clock, play_clock)| {
                let rules: Vec<String> = rules.iter().map(|r| format!("(init {r})")).collect();
                Request::Start(Start {
                    match_id,
                    role,
                    rules: rules.join(" "),
                    start_clock,
                    play_clock,
                })
            }),
        (id, moves()).prop_map(|(match_id, moves)| Request::Play { match_id, moves }),
        (id, moves()).prop_map(|(match_id, moves)| Request::Stop { match_id, moves }),
        id.prop_map(|match_id| Request::Abort { match_id }),
        Just(Request::Info),
    ]
}

proptest! {
    /// Printing a request and reading it back gives the same request.
    #[test]
    fn requests_round_trip(r in request()) {
        prop_assert_eq!(Request::parse(&r.to_string()).unwrap(), r);
    }

    /// Reading never panics, whatever the bytes.
    #[test]
    fn any_text_is_read_or_refused(text in "\\PC{0,80}") {
        let _ = Request::parse(&text);
        let _ = InfoReply::parse(&text);
        let _ = move_candidates(&text);
    }

    /// The manager reads any reply to any request without a panic: a reply it can use, or an
    /// error that says what was expected and where.
    #[test]
    fn any_reply_is_judged(r in request(), text in prop_oneof!["\\PC{0,80}", term(), "[()a-zA-Z ;?\n]{0,40}"]) {
        match Reply::parse_for(&r, &text) {
            Ok(_) => {}
            Err(e) => {
                prop_assert!(!e.message.is_empty());
                prop_assert!(e.offset <= text.len());
            }
        }
    }
}

#[test]
fn the_gamecontroller_gdl2_messages_print_exactly_as_it_sends_them() {
    // `../shared/expectations/gamecontroller-gdl2/README.md`, with the rules' own spelling.
    let sees = |stop, percepts: Option<&[&str]>| Request::Sees {
        stop,
        match_id: "monty-1".into(),
        percepts: percepts.map(|p| p.iter().map(|s| s.to_string()).collect()),
    };
    assert_eq!(sees(false, None).to_string(), "(PLAY monty-1 NIL)");
    assert_eq!(
        sees(false, Some(&["(DOES CANDIDATE (CHOOSE 1))"])).to_string(),
        "(PLAY monty-1 ((DOES CANDIDATE (CHOOSE 1)) ))"
    );
    assert_eq!(
        sees(false, Some(&["(DOES CANDIDATE NOOP)", "(OPEN_DOOR 3)"])).to_string(),
        "(PLAY monty-1 ((DOES CANDIDATE NOOP) (OPEN_DOOR 3) ))"
    );
    assert_eq!(
        sees(true, Some(&["(DOES CANDIDATE SWITCH)", "(CAR 2)"])).to_string(),
        "(STOP monty-1 ((DOES CANDIDATE SWITCH) (CAR 2) ))"
    );
    assert_eq!(sees(false, Some(&[])).to_string(), "(PLAY monty-1 ())");
    // Read back, they are PLAY and STOP with a list of terms; the replies are a move and DONE.
    let play = Request::parse("(PLAY monty-1 ((DOES CANDIDATE NOOP) (OPEN_DOOR 3) ))").unwrap();
    assert_eq!(
        play,
        Request::Play {
            match_id: "monty-1".into(),
            moves: Some(vec!["(DOES CANDIDATE NOOP)".into(), "(OPEN_DOOR 3)".into()])
        }
    );
    assert_eq!(
        Reply::parse_for(&sees(false, None), "(choose 1)").unwrap(),
        Reply::Move("(choose 1)".into())
    );
    assert_eq!(
        Reply::parse_for(&sees(true, Some(&[])), "done").unwrap(),
        Reply::Done
    );
}

#[test]
fn the_gdl2_messages_with_turn_and_move_round_trip() {
    let first = Turn {
        stop: false,
        match_id: "m.2".into(),
        turn: 0,
        last_move: None,
        percepts: None,
    };
    assert_eq!(
        Request::Turn(first.clone()).to_string(),
        "(PLAY m.2 0 NIL NIL)"
    );
    let later = Turn {
        stop: true,
        match_id: "m.2".into(),
        turn: 3,
        last_move: Some("(choose 1)".into()),
        percepts: Some(vec!["(open_door 3)".into()]),
    };
    let text = Request::Turn(later.clone()).to_string();
    assert_eq!(text, "(STOP m.2 3 (choose 1) ((open_door 3) ))");
    for (text, turn) in [("(PLAY m.2 0 NIL NIL)".to_string(), first), (text, later)] {
        assert_eq!(Request::parse(&text).unwrap(), Request::Turn(turn));
    }
    let bad = Request::parse("(PLAY m.2 x NIL NIL)").unwrap_err();
    assert!(bad.message.contains("the turn"), "{bad}");
    let bad = Request::parse("(PLAY m.2 0 NIL)").unwrap_err();
    assert!(bad.message.contains("<turn>"), "{bad}");
}
