//! The search players on small games written for them: the solver's forced wins, puzzles,
//! simultaneous moves, three roles, determinism under a seed, the memory budget over a long
//! match, and flat Monte Carlo.

use std::time::{Duration, Instant};

use gdl_reason::{StateMachine, TermId};
use ggp_play::{Game, MctsConfig, MctsStrategy, MonteCarloStrategy, Strategy, load};

/// Nim: a pile of `pile`, the roles take 1, 2 or 3 in turn (`x` first); who takes the last
/// wins.
fn nim(pile: u32) -> String {
    let numbers: String = (0..=pile).map(|n| format!("(n {n}) ")).collect();
    let minus: String = (0..=pile)
        .flat_map(|a| (1..=3).filter(move |k| *k <= a).map(move |k| (a, k)))
        .map(|(a, k)| format!("(minus {a} {k} {}) ", a - k))
        .collect();
    format!(
        "(role x) (role o) {numbers} {minus}
         (init (pile {pile})) (init (control x))
         (<= (legal ?r (take ?k)) (true (control ?r)) (true (pile ?a)) (minus ?a ?k ?b))
         (<= (legal x noop) (true (control o))) (<= (legal o noop) (true (control x)))
         (<= (next (pile ?b)) (does ?r (take ?k)) (true (pile ?a)) (minus ?a ?k ?b))
         (<= (next (control o)) (true (control x))) (<= (next (control x)) (true (control o)))
         (<= (next (last ?r)) (does ?r (take ?k)))
         (<= terminal (true (pile 0)))
         (<= (goal ?r 100) (true (last ?r))) (<= (goal x 0) (true (last o)))
         (<= (goal o 0) (true (last x))) (<= (goal ?r 50) (role ?r) (not terminal))"
    )
}

fn game(rules: &str, role: usize) -> Game {
    let machine = load(rules).unwrap_or_else(|e| panic!("{e}"));
    Game::new(machine, role).unwrap_or_else(|e| panic!("{e}"))
}

fn text(game: &Game, t: TermId) -> String {
    game.text(t)
}

/// A budget of simulations, one thread, fixed rollouts per leaf: deterministic.
fn budget(simulations: u64) -> MctsConfig {
    MctsConfig {
        simulations: Some(simulations),
        rollouts_per_leaf: Some(2),
        ..MctsConfig::default()
    }
}

fn far() -> Instant {
    Instant::now() + Duration::from_secs(60)
}

/// Plays `joint` (every role's move as text) in `game`.
fn play(game: &mut Game, joint: &[&str]) {
    let moves: Vec<String> = joint.iter().map(|m| m.to_string()).collect();
    game.apply(&moves).unwrap();
}

#[test]
fn the_solver_takes_a_win_in_one() {
    // A pile of 3: taking 3 wins at once; taking 1 or 2 lets o win at once.
    let mut g = game(&nim(3), 0);
    let mut mcts = MctsStrategy::new(budget(100), 1);
    let chosen = mcts.select(&mut g, far()).unwrap();
    assert_eq!(text(&g, chosen), "(take 3)");
    let report = mcts.report().unwrap();
    assert!(
        report
            .note
            .as_deref()
            .unwrap_or("")
            .contains("proven: goal 100"),
        "{report:?}"
    );
}

#[test]
fn the_solver_finds_a_forced_win_in_two() {
    // A pile of 5: only taking 1 wins (o then faces 4, and x takes what is left).
    let mut g = game(&nim(5), 0);
    let mut mcts = MctsStrategy::new(budget(20_000), 3);
    let chosen = mcts.select(&mut g, far()).unwrap();
    assert_eq!(text(&g, chosen), "(take 1)");
    let report = mcts.report().unwrap();
    assert!(
        report
            .note
            .as_deref()
            .unwrap_or("")
            .contains("proven: goal 100"),
        "{report:?}"
    );
    // o replies, and x finishes (the tree is reused).
    play(&mut g, &["(take 1)", "noop"]);
    play(&mut g, &["noop", "(take 2)"]);
    let chosen = mcts.select(&mut g, far()).unwrap();
    assert_eq!(text(&g, chosen), "(take 2)");
}

#[test]
fn the_solver_does_not_let_the_opponent_win_in_one() {
    // Tic-tac-toe, o to move: x threatens the top row; o must block at (1 3), every other
    // move loses at once.
    let mut g = game(include_str!("../../../games/tictactoe.kif"), 1);
    for (x, o) in [("(play 1 1)", "(play 2 2)"), ("(play 1 2)", "")] {
        play(&mut g, &[x, "wait"]);
        if !o.is_empty() {
            play(&mut g, &["wait", o]);
        }
    }
    let mut mcts = MctsStrategy::new(budget(3_000), 5);
    let chosen = mcts.select(&mut g, far()).unwrap();
    assert_eq!(text(&g, chosen), "(play 1 3)");
}

#[test]
fn a_search_with_a_budget_and_one_thread_is_deterministic() {
    let rules = include_str!("../../../games/tictactoe.kif");
    let run = || {
        let mut g = game(rules, 0);
        let mut mcts = MctsStrategy::new(budget(4_000), 42);
        let chosen = mcts.select(&mut g, far()).unwrap();
        let r = mcts.report().unwrap();
        (
            text(&g, chosen),
            r.simulations,
            r.iterations,
            r.nodes,
            r.visits,
            r.value,
        )
    };
    assert_eq!(run(), run());
}

/// A one-role puzzle: five moves, each `a` or `b`; 100 only for `b a a b a`, else 10 for each
/// `a` played.
const PUZZLE: &str = "(role p) (init (at 0))
    (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
    (want 0 b) (want 1 a) (want 2 a) (want 3 b) (want 4 a)
    (<= (legal p (go a)) (true (at ?n)) (succ ?n ?m))
    (<= (legal p (go b)) (true (at ?n)) (succ ?n ?m))
    (<= (next (at ?m)) (true (at ?n)) (succ ?n ?m))
    (<= (next (did ?n ?x)) (does p (go ?x)) (true (at ?n)))
    (<= (next (did ?n ?x)) (true (did ?n ?x)))
    (<= (next wrong) (does p (go ?x)) (true (at ?n)) (not (want ?n ?x)))
    (<= (next wrong) (true wrong))
    (<= terminal (true (at 5)))
    (<= (goal p 100) (not (true wrong)))
    (<= (goal p 0) (true wrong))";

#[test]
fn a_puzzle_is_solved_and_its_line_played() {
    let mut g = game(PUZZLE, 0);
    let mut mcts = MctsStrategy::new(budget(5_000), 7);
    let mut line = Vec::new();
    for _ in 0..5 {
        let chosen = mcts.select(&mut g, far()).unwrap();
        let m = text(&g, chosen);
        play(&mut g, &[m.as_str()]);
        line.push(m);
    }
    assert_eq!(line, ["(go b)", "(go a)", "(go a)", "(go b)", "(go a)"]);
    assert!(g.machine.is_terminal(&g.state.clone()).unwrap());
    assert_eq!(g.machine.goals(&g.state.clone()).unwrap(), [100]);
}

/// Simultaneous moves: each role shows `x` or `y`; `a` gets 80 for `y` whatever `b` shows (20
/// for `x`), `b` gets 100 for matching `a`'s move.
const SIMULTANEOUS: &str = "(role a) (role b) (init start)
    (<= (legal ?r (show x)) (role ?r) (true start))
    (<= (legal ?r (show y)) (role ?r) (true start))
    (<= (next (shown ?r ?m)) (does ?r (show ?m)))
    (<= terminal (not (true start)))
    (<= (goal a 80) (true (shown a y))) (<= (goal a 20) (true (shown a x)))
    (<= (goal b 100) (true (shown a ?m)) (true (shown b ?m)))
    (<= (goal b 0) (true (shown a ?m)) (true (shown b ?n)) (distinct ?m ?n))
    (<= (goal ?r 0) (role ?r) (true start))";

#[test]
fn simultaneous_moves_each_role_its_own_goal() {
    let mut a = game(SIMULTANEOUS, 0);
    let mut mcts = MctsStrategy::new(budget(3_000), 1);
    let chosen = mcts.select(&mut a, far()).unwrap();
    assert_eq!(text(&a, chosen), "(show y)");
    let value = mcts.report().unwrap().value.unwrap();
    assert!((79.0..=81.0).contains(&value), "{value}");
}

/// Three roles in turn: `one` chooses who wins, between itself and `two`; then `two` and
/// `three` have a single move each.
const THREE: &str = "(role one) (role two) (role three) (init (turn one))
    (<= (legal one (crown one)) (true (turn one)))
    (<= (legal one (crown two)) (true (turn one)))
    (<= (legal two noop) (true (turn one))) (<= (legal three noop) (true (turn one)))
    (<= (next (winner ?w)) (does one (crown ?w)))
    (<= terminal (true (winner ?w)))
    (<= (goal ?r 100) (true (winner ?r)))
    (<= (goal ?r 0) (role ?r) (true (winner ?w)) (distinct ?r ?w))
    (<= (goal ?r 0) (role ?r) (true (turn one)))";

#[test]
fn three_roles_each_maximises_its_own_goal() {
    let mut g = game(THREE, 0);
    let mut mcts = MctsStrategy::new(budget(200), 1);
    let chosen = mcts.select(&mut g, far()).unwrap();
    assert_eq!(text(&g, chosen), "(crown one)");
}

/// Two roles move in turn for `steps` moves, each of three moves a turn, each `up` counted
/// (up to 3); it ends in a draw.
fn long_game(steps: u32) -> String {
    let succ: String = (0..steps)
        .map(|n| format!("(succ {n} {}) ", n + 1))
        .collect();
    format!(
        "(role x) (role o) {succ} (upto 0 1) (upto 1 2) (upto 2 3) (upto 3 3)
         (init (step 0)) (init (control x)) (init (ups 0))
         (<= (legal ?r up) (true (control ?r)))
         (<= (legal ?r down) (true (control ?r)))
         (<= (legal ?r stay) (true (control ?r)))
         (<= (legal x noop) (true (control o))) (<= (legal o noop) (true (control x)))
         (<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
         (<= (next (control o)) (true (control x))) (<= (next (control x)) (true (control o)))
         (<= (next (ups ?m)) (does ?r up) (true (ups ?n)) (upto ?n ?m))
         (<= (next (ups ?n)) (does ?r down) (true (ups ?n)))
         (<= (next (ups ?n)) (does ?r stay) (true (ups ?n)))
         (<= terminal (true (step {steps})))
         (<= (goal ?r 50) (role ?r))"
    )
}

#[test]
fn the_tree_stays_within_its_budget_over_a_200_move_match() {
    let rules = long_game(200);
    let max_nodes = 3_000;
    let config = MctsConfig {
        max_nodes,
        simulations: Some(2_500),
        rollouts_per_leaf: Some(1),
        ..MctsConfig::default()
    };
    let mut players: Vec<(MctsStrategy, Game)> = (0..2)
        .map(|role| (MctsStrategy::new(config, role as u64), game(&rules, role)))
        .collect();
    let mut largest = 0;
    for step in 0..200 {
        let mut joint = Vec::new();
        for (mcts, g) in &mut players {
            let chosen = mcts.select(g, far()).unwrap();
            assert!(
                mcts.nodes() <= max_nodes,
                "step {step}: {} nodes",
                mcts.nodes()
            );
            largest = largest.max(mcts.nodes());
            joint.push(text(g, chosen));
        }
        let joint: Vec<&str> = joint.iter().map(String::as_str).collect();
        for (_, g) in &mut players {
            play(g, &joint);
        }
    }
    let (_, g) = &mut players[0];
    assert!(g.machine.is_terminal(&g.state.clone()).unwrap());
    // The budget was reached (and the tree pruned), not merely never approached.
    assert!(largest > max_nodes / 2, "{largest}");
}

#[test]
fn a_young_tree_takes_few_leaves_a_batch_with_many_rollouts_each() {
    // The first batch of a new tree: 16 leaves of 32 rollouts (the fast engine's 512 lanes
    // filled), not 512 leaves of one rollout, which would grow the tree breadth first.
    let mut g = game(&long_game(100), 0);
    assert_eq!(g.machine.parallel_playouts(), 512);
    let config = MctsConfig {
        simulations: Some(512),
        ..MctsConfig::default()
    };
    let mut mcts = MctsStrategy::new(config, 1);
    mcts.select(&mut g, far()).unwrap();
    assert_eq!(mcts.report().unwrap().simulations, 512);
    // The root and one node a leaf.
    assert_eq!(mcts.nodes(), 17);
}

#[test]
fn the_trees_moves_stay_within_their_budget_too() {
    // 400 moves a turn: the moves, not the nodes, fill the budget.
    let numbers: String = (0..400).map(|n| format!("(n {n}) ")).collect();
    let rules = format!(
        "(role r) {numbers} (init (t 0)) (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
         (<= (legal r (pick ?n)) (n ?n) (true (t ?x)))
         (<= (next (t ?y)) (true (t ?x)) (succ ?x ?y))
         (<= (next (picked ?n)) (does r (pick ?n)))
         (<= terminal (true (t 4)))
         (<= (goal r 100) (true (picked 7))) (<= (goal r 0) (not (true (picked 7))))"
    );
    let max_nodes = 1_000;
    let config = MctsConfig {
        max_nodes,
        simulations: Some(20_000),
        rollouts_per_leaf: Some(1),
        ..MctsConfig::default()
    };
    let mut mcts = MctsStrategy::new(config, 1);
    let mut g = game(&rules, 0);
    mcts.select(&mut g, far()).unwrap();
    let budget = max_nodes * ggp_play::mcts::MOVES_PER_NODE;
    assert!(mcts.moves() <= budget, "{} moves", mcts.moves());
    assert!(mcts.moves() > budget / 4, "{} moves", mcts.moves());
    assert!(mcts.nodes() < max_nodes / 4, "{} nodes", mcts.nodes());
}

#[test]
fn flat_monte_carlo_prefers_the_better_move() {
    // A pile of 3 in nim: taking 3 wins at once; the others lose more often than not.
    let mut g = game(&nim(3), 0);
    let mut mc = MonteCarloStrategy::new(1);
    let chosen = mc
        .select(&mut g, Instant::now() + Duration::from_millis(300))
        .unwrap();
    assert_eq!(text(&g, chosen), "(take 3)");
    let report = mc.report().unwrap();
    assert!(report.simulations > 0, "{report:?}");
    assert_eq!(report.value, Some(100.0));
    // Simultaneous moves: a's dominant move.
    let mut a = game(SIMULTANEOUS, 0);
    let chosen = mc
        .select(&mut a, Instant::now() + Duration::from_millis(300))
        .unwrap();
    assert_eq!(text(&a, chosen), "(show y)");
    assert_eq!(mc.stats().unwrap().moves, 2);
}

#[test]
fn a_move_comes_back_before_the_deadline() {
    // Whatever the search does, the move is back by the deadline (a generous one: the margin
    // is 5 % of it, at most 200 ms, reached at 4 s; less is eaten by a loaded machine's
    // scheduling when the other tests run beside this one).
    // A game too long to be solved in the time.
    let mut g = game(&long_game(100), 0);
    for threads in [1, 2] {
        let mut mcts = MctsStrategy::new(
            MctsConfig {
                threads,
                ..MctsConfig::default()
            },
            1,
        );
        let deadline = Instant::now() + Duration::from_secs(4);
        mcts.select(&mut g, deadline).unwrap();
        assert!(mcts.report().unwrap().simulations > 0);
        let late = Instant::now().saturating_duration_since(deadline);
        assert!(late.is_zero(), "threads {threads}: {late:?} late");
    }
}
