use std::path::PathBuf;

use gdl_reason::StateMachine;

use super::*;
use crate::term::{Term, parse, parse_state};

fn geometry(text: &str) -> Option<Geometry> {
    Geometry::detect(&parse_state(text))
}

/// A corpus game's rules, or `None` (skipped, saying so) when `../shared` is absent.
fn corpus(test: &str, file: &str) -> Option<String> {
    let shared: PathBuf = ggp_testdata::shared_or_skip(test)?;
    Some(std::fs::read_to_string(shared.join("corpus/games/base").join(file)).unwrap())
}

fn project(file: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../games");
    std::fs::read_to_string(root.join(file)).unwrap()
}

/// The fluents that can hold, as the server keeps them: the `base` facts, or those of the
/// initial state and a few steps of the first legal moves.
fn fluents(rules: &str) -> Vec<Term> {
    let mut m = ggp_play::load(rules).unwrap();
    let spell = |m: &ggp_play::Machine, ids: Vec<gdl_reason::TermId>| -> Vec<Term> {
        ids.into_iter()
            .filter_map(|f| parse(&m.terms().spelled(m.symbols(), f)))
            .collect()
    };
    if let Some(base) = m.base_fluents().unwrap() {
        return spell(&m, base);
    }
    let mut state = m.initial_state().unwrap();
    let mut out = spell(&m, m.fluents(&state));
    for _ in 0..20 {
        if m.is_terminal(&state).unwrap() {
            break;
        }
        let joint: Vec<_> = (0..m.roles().len())
            .map(|r| m.legal_moves(&state, r).unwrap()[0])
            .collect();
        state = m.next_state(&state, &joint).unwrap();
        out.extend(spell(&m, m.fluents(&state)));
    }
    out
}

fn detect(rules: &str) -> Geometry {
    Geometry::detect_with(&fluents(rules), Some(rules)).expect("a board")
}

#[test]
fn a_board_relation_is_found_and_its_runs_filled() {
    let g = geometry(
        "((cell 1 1 b) (cell 1 3 x) (cell 3 2 o) (cell 2 2 b) (control xplayer) (step 1))",
    )
    .unwrap();
    assert_eq!(g.relation, "cell");
    assert_eq!(g.columns, ["1", "2", "3"]);
    assert_eq!(g.rows, ["3", "2", "1"]);
    let chess =
        geometry("((cell a 1 wr) (cell h 8 br) (cell c 4 b) (cell d 4 b) (moved wk e 1))").unwrap();
    assert_eq!(chess.columns.len(), 8);
    assert_eq!(chess.rows, ["8", "7", "6", "5", "4", "3", "2", "1"]);
}

#[test]
fn the_relation_with_most_cells_wins_and_big_or_odd_ones_are_not_boards() {
    let g = geometry(
        "((cell a 1 red) (cell a 2 red) (cell b 1 blue) (cell b 2 blue) (cell c 3 red)
          (owner 1 red) (owner 2 blue) (link 1 a) (link 2 b))",
    )
    .unwrap();
    assert_eq!(g.relation, "cell");
    assert!(geometry("((control x) (step 1) (score x 10))").is_none());
    // A coordinate that is not a constant.
    assert!(geometry("((at (p 1) 1) (at 2 2) (at 3 3) (at 4 4))").is_none());
    // Forty values on one axis: not a board.
    let wide: String = (0..40).map(|k| format!("(seen {k} {})", k % 2)).collect();
    assert!(geometry(&format!("({wide})")).is_none());
}

#[test]
fn moves_name_cells_or_columns() {
    let g = geometry("((cell a 1 wr) (cell h 8 br) (cell e 2 wp) (cell e 4 b))").unwrap();
    let t = targets(
        &[
            "(move wp e 2 e 4)".into(),
            "noop".into(),
            "(place c 3)".into(),
        ],
        &g,
    );
    assert_eq!(t.len(), 2);
    assert_eq!(
        t[0].cells,
        [["e".to_string(), "2".to_string()], ["e".into(), "4".into()]]
    );
    assert_eq!(t[1].cells, [["c".to_string(), "3".to_string()]]);
    let c4 = geometry("((cell 1 1 red) (cell 8 6 black) (cell 2 1 red) (cell 3 1 red))").unwrap();
    let t = targets(&["(drop 3)".into(), "(drop 9)".into()], &c4);
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].column.as_deref(), Some("3"));
    assert!(t[0].cells.is_empty());
}

#[test]
fn contents_from_outside_are_escaped() {
    let state = parse_state(
        "((cell 1 1 <script>alert(1)</script>) (cell 1 2 x) (cell 2 1 o) (cell 2 2 b) (<img> 1))",
    );
    let g = Geometry::detect(&state).unwrap();
    let html = render(&state, Some(&g)).into_string();
    assert!(!html.contains("<script>"), "{html}");
    assert!(!html.contains("<img>"), "{html}");
    assert!(html.contains("&lt;img&gt;"), "{html}");
}

/// The `g.cell` of `(x, y)` in a rendered board: its opening tag.
fn cell_tag(html: &str, x: &str, y: &str) -> String {
    let needle = format!("data-x=\"{x}\" data-y=\"{y}\"");
    let at = html
        .find(&needle)
        .unwrap_or_else(|| panic!("no cell {x} {y} in {html}"));
    let start = html[..at].rfind("<g ").unwrap();
    let end = at + html[at..].find('>').unwrap();
    html[start..=end].to_string()
}

/// The centre of a cell's group, from its `translate(x y)`.
fn centre(tag: &str) -> (f64, f64) {
    let t = &tag[tag.find("translate(").unwrap() + 10..];
    let t = &t[..t.find(')').unwrap()];
    let (x, y) = t.split_once(' ').unwrap();
    (x.parse().unwrap(), y.parse().unwrap())
}

#[test]
fn hex_games_are_drawn_as_hexagons_from_their_adjacency() {
    for (file, skew, side) in [
        ("hex.kif", Skew::Right, 9),
        ("laikLee_hex.kif", Skew::Right, 5),
    ] {
        let Some(rules) = corpus("hex boards", file) else {
            return;
        };
        let g = detect(&rules);
        assert_eq!(g.shape, Shape::Hex(skew), "{file}");
        assert_eq!((g.columns.len(), g.rows.len()), (side, side), "{file}");
        let html = render(&[], Some(&g)).into_string();
        assert!(html.contains("class=\"board hex\""), "{file}: {html}");
        assert_eq!(
            html.matches("class=\"cell hex").count(),
            side * side,
            "{file}"
        );
        assert!(!html.contains("cell square"), "{file}");
        // Each row is shifted half a hexagon from the one above, the way the rules' six
        // neighbours say: a cell's neighbours below are straight below-left and below-right.
        let (x0, y0) = centre(&cell_tag(&html, &g.columns[1], &g.rows[0]));
        let (x1, y1) = centre(&cell_tag(&html, &g.columns[1], &g.rows[1]));
        assert!(y1 > y0, "{file}");
        match skew {
            Skew::Right => assert!(x1 > x0, "{file}: {x0} {x1}"),
            Skew::Left => assert!(x1 < x0, "{file}: {x0} {x1}"),
        }
    }
}

#[test]
fn a_square_grid_is_not_taken_for_hexagons() {
    for file in ["ticTacToe.kif", "breakthrough.kif", "connectFour.kif"] {
        let Some(rules) = corpus("square boards", file) else {
            return;
        };
        assert_eq!(detect(&rules).shape, Shape::Square, "{file}");
    }
}

#[test]
fn games_where_pieces_fall_are_drawn_plain() {
    let mut games = vec![("connect4.kif (project)", project("connect4.kif"))];
    if let Some(rules) = corpus("connect four", "connectFour.kif") {
        games.push(("connectFour.kif", rules));
    }
    for (name, rules) in games {
        let g = detect(&rules);
        assert!(g.gravity, "{name}");
        // Pieces land on row 1 first: it is at the bottom.
        assert_eq!(
            g.rows.last().map(String::as_str),
            Some("1"),
            "{name}: {:?}",
            g.rows
        );
        let html = render(&[], Some(&g)).into_string();
        assert!(
            html.contains("class=\"board square plain\""),
            "{name}: {html}"
        );
        assert!(!html.contains("checker"), "{name}");
        assert!(!html.contains(" dark"), "{name}");
    }
    // A game where pieces do not fall keeps its checkered pattern.
    let rules = project("tictactoe.kif");
    let html = render(&[], Some(&detect(&rules))).into_string();
    assert!(html.contains("class=\"board square checker\""), "{html}");
    assert!(html.contains("cell square dark"), "{html}");
}

#[test]
fn tic_tac_toe_puts_row_1_column_3_where_its_rules_say() {
    let Some(rules) = corpus("tic-tac-toe orientation", "ticTacToe.kif") else {
        return;
    };
    let g = detect(&rules);
    // `(row ?m ?x)` over `(cell ?m 1 ?x)`: the first argument is the row, as in a matrix, row 1
    // at the top; the second the column, 1 on the left.
    assert_eq!(g.column_arg, 1);
    assert_eq!(g.rows, ["1", "2", "3"]);
    assert_eq!(g.columns, ["1", "2", "3"]);
    let state = parse_state("((cell 1 3 x) (cell 1 1 b) (cell 3 1 o) (control oplayer))");
    let html = render(&state, Some(&g)).into_string();
    let corner = cell_tag(&html, "3", "1"); // column 3, row 1
    let (x, y) = centre(&corner);
    let (left, bottom) = centre(&cell_tag(&html, "1", "3"));
    assert!(
        x > left && y < bottom,
        "(cell 1 3 x) is at the top right: {x} {y}"
    );
    let after = &html[html.find(&corner).unwrap()..];
    assert!(
        after[..after.find("</g>").unwrap()].contains("mark-x"),
        "{html}"
    );
    // `(cell 3 1 o)`: row 3, column 1, the bottom left.
    let o = cell_tag(&html, "1", "3");
    let after = &html[html.find(&o).unwrap()..];
    assert!(
        after[..after.find("</g>").unwrap()].contains("mark-o"),
        "{html}"
    );
    // A move names its cell in the same order.
    let t = targets(&["(mark 1 3)".into()], &g);
    assert_eq!(t[0].cells, [["3".to_string(), "1".to_string()]]);
    // Chess keeps files left to right and rank 8 at the top.
    if let Some(rules) = corpus("chess orientation", "chess.kif") {
        let g = detect(&rules);
        assert_eq!(g.column_arg, 0);
        assert_eq!(g.columns.first().map(String::as_str), Some("a"));
        assert_eq!(g.rows.first().map(String::as_str), Some("8"));
        assert_eq!(g.shape, Shape::Square);
        assert!(!g.gravity);
    }
}

#[test]
fn the_cells_the_last_move_changed_are_marked() {
    let rules = project("tictactoe.kif");
    let g = detect(&rules);
    let before = parse_state("((square 1 1 empty) (square 1 2 empty) (square 2 2 x) (mover o))");
    let after = parse_state("((square 1 1 empty) (square 1 2 o) (square 2 2 x) (mover x))");
    let html = render_step(&after, Some(&before), Some(&g)).into_string();
    assert_eq!(html.matches(" changed").count(), 1, "{html}");
    let (a, b) = if g.column_arg == 0 {
        ("1", "2")
    } else {
        ("2", "1")
    };
    assert!(cell_tag(&html, a, b).contains("changed"), "{html}");
    // The first state has nothing to compare with.
    let html = render_step(&before, None, Some(&g)).into_string();
    assert!(!html.contains("changed"));
}

#[test]
fn a_gdl2_role_sees_what_it_knows_for_certain_and_the_rest_shaded() {
    let rules = project("blindbreakthrough.kif");
    let g = detect(&rules);
    assert_eq!(g.rows.first().map(String::as_str), Some("5"));
    let mut m = ggp_play::load(&rules).unwrap();
    let state = m.initial_state().unwrap();
    let white_move = "(move 1 2 1 3)";
    let joint = vec![m.intern(white_move).unwrap(), m.intern("noop").unwrap()];
    let percepts = |m: &mut ggp_play::Machine, r: usize| -> Vec<String> {
        m.percepts(&state, &joint, r)
            .unwrap()
            .into_iter()
            .map(|p| m.terms().spelled(m.symbols(), p))
            .collect()
    };
    let (white_sees, black_sees) = (percepts(&mut m, 0), percepts(&mut m, 1));
    // White moved and knows where; black sees nothing of it.
    let mut white = Knowledge::new(&rules, 0).unwrap();
    assert!(white.step(Some(white_move), &white_sees));
    let mut black = Knowledge::new(&rules, 1).unwrap();
    assert!(black.step(Some("noop"), &black_sees));
    let w = white.known();
    assert!(
        w.certain.iter().any(|f| f.text() == "(cell 1 3 white)"),
        "{w:?}"
    );
    let start = Knowledge::new(&rules, 0).unwrap().known();
    let html = render_known(&w.certain, &w.possible, Some(&start.certain), Some(&g)).into_string();
    assert!(
        !html.contains("uncertain"),
        "white knows the whole board: {html}"
    );
    // Its move changed two cells, from and to.
    assert_eq!(html.matches(" changed").count(), 2, "{html}");
    assert!(cell_tag(&html, "1", "2").contains("changed"), "{html}");
    assert!(cell_tag(&html, "1", "3").contains("changed"), "{html}");
    let b = black.known();
    // Black's own pawns are certain; where white's pawn went is not.
    assert!(
        b.certain.iter().any(|f| f.text() == "(cell 1 5 black)"),
        "{b:?}"
    );
    assert!(
        !b.certain.iter().any(|f| f.text() == "(cell 1 3 white)"),
        "{b:?}"
    );
    assert!(
        b.possible.iter().any(|f| f.text() == "(cell 1 3 white)"),
        "{b:?}"
    );
    let html = render_known(&b.certain, &b.possible, None, Some(&g)).into_string();
    assert!(cell_tag(&html, "1", "3").contains("uncertain"), "{html}");
    // What it may hold is drawn faintly.
    let maybe = &html[html.find(&cell_tag(&html, "1", "3")).unwrap()..];
    let maybe = &maybe[..maybe.find("</g></g>").unwrap()];
    assert!(
        maybe.contains("class=\"maybe\"") && maybe.contains("c-white"),
        "{maybe}"
    );
    assert!(cell_tag(&html, "1", "2").contains("uncertain"), "{html}");
    assert!(!cell_tag(&html, "1", "5").contains("uncertain"), "{html}");
    assert!(!cell_tag(&html, "3", "1").contains("uncertain"), "{html}");
    let mine = &html[html.find(&cell_tag(&html, "1", "5")).unwrap()..];
    assert!(
        mine[..mine.find("</g>").unwrap()].contains("c-black"),
        "{html}"
    );
}

#[test]
fn the_rules_alone_give_the_board_before_the_game_is_analysed() {
    let Some(rules) = corpus("hex from its rules", "hex.kif") else {
        return;
    };
    // No fluents known yet (the game's analysis has not run): `base` follows from facts.
    let g = Geometry::detect_with(&[], Some(&rules)).expect("a board from the rules");
    assert_eq!(g.shape, Shape::Hex(Skew::Right));
    assert_eq!((g.columns.len(), g.rows.len()), (9, 9));
}
