//! `ggp serve` in a real browser: headless Chromium driven over WebDriver (`chromedriver`).
//! A person logs in, creates a match against a random player through the form, plays it to
//! its end by clicking the board, plays a GDL-II game (Monty Hall) seeing only its role's
//! view, and then watches a match of two built-in players update live to its end; and plays
//! a GDL-III game (number guessing) on a phone, seeing its answers and what it knows.
//!
//! Needs Debian's `chromium` and `chromium-driver`. `.ci/run` installs them and sets
//! `GGP_BROWSER_TEST=required`, so in CI their absence is a failure; elsewhere the test says
//! loudly that it was skipped.

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

/// `chromedriver` on a free port, in a process group of its own; the group (the driver and
/// the browsers it started) is killed when dropped, even when the test fails midway.
struct Driver(Child, u16);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_driver(binary: &PathBuf) -> Driver {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    use std::os::unix::process::CommandExt;
    let child = Command::new(binary)
        .arg(format!("--port={port}"))
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(30, || {
        std::net::TcpStream::connect(("127.0.0.1", port)).ok()
    });
    Driver(child, port)
}

/// A browser session whose page is `width` × `height` CSS pixels. Below 500 px, headless
/// Chromium's window does not shrink further: a phone's screen is emulated instead.
async fn browser(driver: &Driver, chromium: &PathBuf, (width, height): (u32, u32)) -> Client {
    let mut options = json!({
        "binary": chromium,
        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 format!("--window-size={},{}", width.max(500), height)],
    });
    if width < 500 {
        options["mobileEmulation"] = json!({
            "deviceMetrics": {"width": width, "height": height, "pixelRatio": 1.0},
        });
    }
    let mut caps = serde_json::Map::new();
    caps.insert("goog:chromeOptions".into(), options);
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.1))
        .await
        .expect("a browser session")
}

/// Waits (up to `seconds`) until `check` says yes.
async fn until<F, Fut>(seconds: u64, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while !check().await {
        assert!(Instant::now() < deadline, "not within {seconds} s: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits for the element `locator` finds, then clicks it.
async fn click(c: &Client, locator: Locator<'_>) {
    c.wait()
        .for_element(locator)
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

async fn text_of(c: &Client, css: &str) -> String {
    match c.find(Locator::Css(css)).await {
        Ok(e) => e.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// `chromedriver` and `chromium`, or `None` where they are missing (the test skipped, saying
/// so; a failure where `GGP_BROWSER_TEST=required`).
fn tools(test: &str) -> Option<(PathBuf, PathBuf)> {
    let (Some(chromedriver), Some(chromium)) = (
        on_path(&["chromedriver"]),
        on_path(&["chromium", "chromium-browser", "google-chrome"]),
    ) else {
        let why = "no chromedriver or chromium on PATH (on Debian: apt-get install chromium chromium-driver)";
        // CI installs them and sets GGP_BROWSER_TEST=required: there, their absence fails.
        assert!(
            std::env::var("GGP_BROWSER_TEST").as_deref() != Ok("required"),
            "the browser test is required here, but {why}"
        );
        eprintln!("skipping {test}: {why}");
        return None;
    };
    Some((chromedriver, chromium))
}

/// The dashboard, then the login with the admin token.
async fn log_in(c: &Client, url: &str) {
    c.goto(url).await.unwrap();
    assert!(c.title().await.unwrap().contains("Gamemaster"));
    c.find(Locator::LinkText("Log in"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.find(Locator::Id("token"))
        .await
        .unwrap()
        .send_keys(ADMIN_TOKEN)
        .await
        .unwrap();
    c.find(Locator::Css("form.card button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.wait()
        .for_element(Locator::XPath("//button[normalize-space()='Log out']"))
        .await
        .expect("logged in");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_plays_and_watches_in_a_browser() {
    let Some((chromedriver, chromium)) = tools("the browser test") else {
        return;
    };
    let db = temp_db("browser.sqlite");
    let games = workspace().join("games").display().to_string();
    let server = spawn_server(&db, &["--games", &games, "--grace-ms", "500"]);
    let driver = start_driver(&chromedriver);
    let c = browser(&driver, &chromium, (1280, 1000)).await;
    log_in(&c, &server.url).await;
    // A new match through the form: the game first (the form sends itself), then the seats.
    click(&c, Locator::LinkText("New match")).await;
    c.wait()
        .for_element(Locator::Id("game"))
        .await
        .unwrap()
        .select_by_value("tictactoe")
        .await
        .unwrap();
    c.wait()
        .for_element(Locator::Id("player0"))
        .await
        .unwrap()
        .select_by_value("human")
        .await
        .unwrap();
    c.find(Locator::Id("player1"))
        .await
        .unwrap()
        .select_by_value("random")
        .await
        .unwrap();
    let clock = c.find(Locator::Id("playclock")).await.unwrap();
    clock.clear().await.unwrap();
    clock.send_keys("60").await.unwrap();
    c.find(Locator::Css("#new-match button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    // The match page, holding the seat: play to the end by clicking the board (and `wait`
    // when it is the other's turn).
    c.wait()
        .for_element(Locator::Css("#seat:not([hidden])"))
        .await
        .unwrap();
    assert!(
        c.current_url()
            .await
            .unwrap()
            .fragment()
            .unwrap()
            .starts_with("seat=0&token=")
    );
    let started = Instant::now();
    let mut clicks = 0;
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the match did not end"
        );
        if text_of(&c, "#status").await == "finished" {
            break;
        }
        if let Ok(cell) = c.find(Locator::Css("#board .cell.target")).await {
            if cell.click().await.is_ok() {
                clicks += 1;
            }
        } else if let Ok(button) = c.find(Locator::Css("#seat-moves button.move")).await {
            let _ = button.click().await;
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    assert!(clicks >= 3, "{clicks} clicks on the board");
    until(10, "the result", || async {
        text_of(&c, "#seat-status")
            .await
            .starts_with("The match is over")
    })
    .await;
    let goals: Vec<String> = {
        let mut out = Vec::new();
        for e in c.find_all(Locator::Css("td.goal")).await.unwrap() {
            out.push(e.text().await.unwrap());
        }
        out
    };
    let url = c.current_url().await.unwrap();
    let id = url.path().trim_start_matches("/matches/").to_string();
    let (_, record) = api(
        "GET",
        &format!("{}/api/matches/{id}", server.url),
        None,
        None,
    );
    assert_eq!(record["status"], "finished");
    let recorded: Vec<String> = record["goalValues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.to_string())
        .collect();
    assert_eq!(goals, recorded);
    // Every mark the person made on the board stood.
    assert!(
        record["errors"]
            .as_array()
            .unwrap()
            .iter()
            .all(|row| row[0] == ""),
        "{record}"
    );

    // A GDL-II game, Monty Hall, played as the contestant (the manager plays `random`). The
    // browser is logged in as the admin, but the seat's page shows only the contestant's
    // view: what it saw, never the state.
    let (status, created) = api(
        "POST",
        &format!("{}/api/matches", server.url),
        Some(ADMIN_TOKEN),
        Some(json!({"game": "montyhall", "players": ["human"], "startclock": 1, "playclock": 60})),
    );
    assert_eq!(status, 201, "{created}");
    let seat_url = created["seats"][0]["url"].as_str().unwrap().to_string();
    c.goto(&format!("{}{seat_url}", server.url)).await.unwrap();
    let choose = c
        .wait()
        .for_element(Locator::XPath(
            "//div[@id='seat-moves']/button[text()='(choose 1)']",
        ))
        .await
        .unwrap();
    assert!(c.find(Locator::Id("truth")).await.is_err(), "no true state");
    assert!(c.find(Locator::Id("board")).await.is_err(), "no board");
    choose.click().await.unwrap();
    let switch = c
        .wait()
        .for_element(Locator::XPath(
            "//div[@id='seat-moves']/button[text()='switch']",
        ))
        .await
        .unwrap();
    // What it knows so far: its pick, then the door the host opened; nothing of the car.
    let rows = c.find_all(Locator::Css("#view-0 tbody tr")).await.unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows[0].text().await.unwrap().contains("(picked 1)"));
    assert!(rows[1].text().await.unwrap().contains("(opened "));
    let source = c.source().await.unwrap();
    assert!(
        !source.contains("(car ") && !source.contains("view-1"),
        "{source}"
    );
    switch.click().await.unwrap();
    // Over: the page shows everything, from the contestant's point of view first.
    c.wait()
        .for_element(Locator::Css("nav.views button.view-tab.active"))
        .await
        .unwrap();
    until(10, "the end, seen as the contestant", || async {
        text_of(&c, "#seat-status")
            .await
            .starts_with("The match is over")
    })
    .await;
    let mine = c.find(Locator::Id("view-0")).await.unwrap();
    assert!(mine.is_displayed().await.unwrap());
    assert!(
        !c.find(Locator::Id("truth"))
            .await
            .unwrap()
            .is_displayed()
            .await
            .unwrap()
    );
    let rows = c.find_all(Locator::Css("#view-0 tbody tr")).await.unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows[2].text().await.unwrap().contains("(car "));
    // The host's point of view, then the true state.
    c.find(Locator::Css("nav.views button.view-tab[data-view='1']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    assert!(
        c.find(Locator::Id("view-1"))
            .await
            .unwrap()
            .is_displayed()
            .await
            .unwrap()
    );
    assert!(!mine.is_displayed().await.unwrap());
    let host = c.find_all(Locator::Css("#view-1 tbody tr")).await.unwrap();
    assert!(host[2].text().await.unwrap().contains("switch"));
    c.find(Locator::Css("nav.views button.view-tab[data-view='truth']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    assert!(
        c.find(Locator::Id("truth"))
            .await
            .unwrap()
            .is_displayed()
            .await
            .unwrap()
    );
    assert!(text_of(&c, "#board").await.contains("car"));

    // Two built-in players on connect four, a little slowed down: the dashboard, opened
    // before it starts, shows it without a reload, and its page follows it live.
    c.goto(&server.url).await.unwrap();
    c.wait().for_element(Locator::Id("live")).await.unwrap();
    let (status, created) = api(
        "POST",
        &format!("{}/api/matches", server.url),
        Some(ADMIN_TOKEN),
        Some(
            json!({"game": "connect4", "players": ["random", "random"], "startclock": 1,
                    "playclock": 5, "delay": 300}),
        ),
    );
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_string();
    let link = format!("#live a[href='/matches/{id}'], #recent a[href='/matches/{id}']");
    until(10, "the new match on the open dashboard", || async {
        c.find(Locator::Css(&link)).await.is_ok()
    })
    .await;
    c.goto(&format!("{}/matches/{id}", server.url))
        .await
        .unwrap();
    // The admin may abort it while it runs.
    if text_of(&c, "#status").await == "live" {
        c.find(Locator::Id("abort-form")).await.unwrap();
    }
    let mut seen = std::collections::BTreeSet::new();
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the match did not end"
        );
        if let Ok(slider) = c.find(Locator::Id("slider")).await
            && let Ok(Some(max)) = slider.attr("max").await
        {
            seen.insert(max.parse::<usize>().unwrap());
        }
        if text_of(&c, "#status").await == "finished" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, record) = api(
        "GET",
        &format!("{}/api/matches/{id}", server.url),
        None,
        None,
    );
    let steps = record["moves"].as_array().unwrap().len();
    assert!(
        seen.len() >= 3,
        "the page did not follow the match: {seen:?}"
    );
    until(10, "the last step on the page", || async {
        c.find(Locator::Id(&format!("step-{steps}"))).await.is_ok()
    })
    .await;
    let label = text_of(&c, "#step-label").await;
    assert_eq!(label, format!("state {steps} of {steps}"));
    // Over, it has nothing left to abort: the button is gone without a reload.
    until(2, "the abort button gone at the match's end", || async {
        c.find(Locator::Id("abort-form")).await.is_err()
    })
    .await;
    let rows = c.find_all(Locator::Css("#moves tbody tr")).await.unwrap();
    assert_eq!(rows.len(), steps);

    // A tournament made through its form; its page follows the standings without a reload;
    // then the leaderboard.
    c.goto(&format!("{}/tournaments", server.url))
        .await
        .unwrap();
    c.wait()
        .for_element(Locator::Id("name"))
        .await
        .unwrap()
        .send_keys("browser cup")
        .await
        .unwrap();
    for css in [
        "input[name=game][value=tictactoe]",
        "input[name=player][value=random]",
        "input[name=player][value=montecarlo]",
    ] {
        c.find(Locator::Css(css))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
    }
    for (id, value) in [("rounds", "2"), ("startclock", "1"), ("playclock", "1")] {
        let field = c.find(Locator::Id(id)).await.unwrap();
        field.clear().await.unwrap();
        field.send_keys(value).await.unwrap();
    }
    c.find(Locator::Css("#new-tournament button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.wait().for_element(Locator::Css("#live")).await.unwrap();
    assert!(
        c.current_url()
            .await
            .unwrap()
            .path()
            .starts_with("/tournaments/")
    );
    assert_eq!(text_of(&c, "h1").await, "browser cup");
    // `montecarlo` thinks for its whole play clock: the page is there before any match ends,
    // and the standings come in by themselves.
    assert!(
        text_of(&c, "#live")
            .await
            .contains("No match has finished yet")
    );
    until(120, "the standings, without a reload", || async {
        c.find(Locator::Css("#standings tbody tr")).await.is_ok()
    })
    .await;
    until(180, "the tournament's end", || async {
        matches!(
            c.find(Locator::Id("live")).await,
            Ok(e) if e.attr("data-status").await.ok().flatten().as_deref() == Some("finished")
        )
    })
    .await;
    // Ended, it has nothing to pause or end any more.
    until(3, "the tournament's controls gone at its end", || async {
        c.find_all(Locator::Css("#tournament-actions button"))
            .await
            .is_ok_and(|buttons| buttons.is_empty())
    })
    .await;
    let standings = c
        .find_all(Locator::Css("#standings tbody tr"))
        .await
        .unwrap();
    assert_eq!(standings.len(), 2);
    for row in &standings {
        let text = row.text().await.unwrap();
        // Each played its 4 matches (two rounds, two seatings each).
        assert!(text.contains(" 4 "), "{text}");
    }
    c.goto(&format!("{}/leaderboard?game=tictactoe", server.url))
        .await
        .unwrap();
    let rows = c
        .find_all(Locator::Css("#leaderboard tbody tr"))
        .await
        .unwrap();
    let mut names = Vec::new();
    for row in &rows {
        let text = row.text().await.unwrap();
        assert!(text.contains('±'), "a rating with its uncertainty: {text}");
        names.push(text);
    }
    assert!(names.iter().any(|t| t.contains("montecarlo")), "{names:?}");
    assert!(names.iter().any(|t| t.contains("random")), "{names:?}");
    c.close().await.unwrap();
}

/// How far the page reaches past a screen `width` CSS pixels wide (0 or less: it fits). The
/// screen's width, not the window's: on an emulated phone, the window widens to a page wider
/// than the screen, as a phone's browser zooms out.
async fn overflow(c: &Client, width: i64) -> i64 {
    c.execute("return document.documentElement.scrollWidth;", vec![])
        .await
        .unwrap()
        .as_i64()
        .unwrap()
        - width
}

/// On a phone (a 400 × 800 window), with the corpus's `base` games loaded beside the project's
/// when `../shared` is there (313 more): the dashboard, the games, the tournaments with the form
/// open and the leaderboard fit the width; the form to make a tournament stays short, its games
/// in a box that scrolls, and its filter box leaves only the games that match what is typed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_fit_a_phone_and_the_tournament_form_finds_games() {
    let Some((chromedriver, chromium)) = tools("the browser test at 400 px") else {
        return;
    };
    let db = temp_db("browser-phone.sqlite");
    let games = workspace().join("games").display().to_string();
    let mut args = vec!["--games".to_string(), games];
    match ggp_testdata::shared_dir() {
        Some(shared) => {
            args.push("--games".into());
            args.push(shared.join("corpus/games/base").display().to_string());
        }
        None => eprintln!("../shared is absent: the project's games only, not the corpus's"),
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = spawn_server(&db, &args);
    let driver = start_driver(&chromedriver);
    let c = browser(&driver, &chromium, (400, 800)).await;
    log_in(&c, &server.url).await;
    // The phone's screen (the window is as wide while the page fits).
    assert_eq!(
        c.execute("return screen.width;", vec![]).await.unwrap(),
        json!(400)
    );

    for path in ["/", "/games", "/tournaments"] {
        c.goto(&format!("{}{path}", server.url)).await.unwrap();
        c.wait().for_element(Locator::Css("main")).await.unwrap();
        let past = overflow(&c, 400).await;
        assert!(past <= 0, "{path} is {past} px wider than a 400 px screen");
    }
    // The games' filter box leaves the rows that match.
    c.goto(&format!("{}/games", server.url)).await.unwrap();
    c.find(Locator::Css("input[data-filter=game-rows]"))
        .await
        .unwrap()
        .send_keys("tictac")
        .await
        .unwrap();
    let mut rows = Vec::new();
    for row in c.find_all(Locator::Css("#game-rows tr")).await.unwrap() {
        if row.is_displayed().await.unwrap() {
            rows.push(row.text().await.unwrap());
        }
    }
    assert!(rows.iter().any(|t| t.starts_with("tictactoe")), "{rows:?}");
    assert!(
        rows.iter().all(|t| t.to_lowercase().contains("tictac")),
        "{rows:?}"
    );
    // The leaderboard is in the navigation.
    c.find(Locator::Css("header.top nav a[href='/leaderboard']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.wait().for_element(Locator::Id("game")).await.unwrap();
    assert_eq!(c.current_url().await.unwrap().path(), "/leaderboard");
    let past = overflow(&c, 400).await;
    assert!(
        past <= 0,
        "/leaderboard is {past} px wider than a 400 px screen"
    );

    // A game's statistics, with its charts, and a player's, once their matches have finished:
    // two random players, and a registered player that cannot be reached against one.
    let (status, registered) = api(
        "POST",
        &format!("{}/api/players", server.url),
        Some(ADMIN_TOKEN),
        Some(json!({"name": "far", "url": "http://127.0.0.1:1"})),
    );
    assert_eq!(status, 201, "{registered}");
    for players in [["random", "random"], ["far", "random"]] {
        let (status, created) = api(
            "POST",
            &format!("{}/api/matches", server.url),
            Some(ADMIN_TOKEN),
            Some(json!({"game": "tictactoe", "players": players, "startclock": 1, "playclock": 1})),
        );
        assert_eq!(status, 201, "{created}");
        let record = format!(
            "{}/api/matches/{}",
            server.url,
            created["id"].as_str().unwrap()
        );
        until(30, "a match of tictactoe to finish", || async {
            api("GET", &record, None, None).1["status"] == "finished"
        })
        .await;
    }
    for (path, charts) in [("/games/tictactoe/stats", 2), ("/players/far", 1)] {
        c.goto(&format!("{}{path}", server.url)).await.unwrap();
        c.wait()
            .for_element(Locator::Css("svg.chart"))
            .await
            .unwrap();
        assert_eq!(
            c.find_all(Locator::Css("svg.chart")).await.unwrap().len(),
            charts,
            "{path}"
        );
        let past = overflow(&c, 400).await;
        assert!(past <= 0, "{path} is {past} px wider than a 400 px screen");
    }

    boards_fit_a_phone(&c, &server.url).await;

    // No tournament yet: the form is open.
    c.goto(&format!("{}/tournaments", server.url))
        .await
        .unwrap();
    let form = c.find(Locator::Id("new-tournament")).await.unwrap();
    let height = c
        .execute(
            "return arguments[0].getBoundingClientRect().height;",
            vec![serde_json::to_value(&form).unwrap()],
        )
        .await
        .unwrap()
        .as_f64()
        .unwrap();
    assert!(height < 2000.0, "the tournament form is {height} px tall");
    let all = c
        .find_all(Locator::Css("#tournament-games label"))
        .await
        .unwrap()
        .len();
    assert!(all > 1, "{all} games in the form");

    // Typing in the filter box leaves the games whose name has it, and keeps a checked one.
    c.find(Locator::Css("#tournament-games input[value=connect4]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.find(Locator::Css("input[data-filter=tournament-games]"))
        .await
        .unwrap()
        .send_keys("tictac\u{E007}")
        .await
        .unwrap();
    let mut shown = Vec::new();
    for label in c
        .find_all(Locator::Css("#tournament-games label"))
        .await
        .unwrap()
    {
        if label.is_displayed().await.unwrap() {
            shown.push(label.text().await.unwrap());
        }
    }
    assert!(
        shown.iter().any(|t| t.starts_with("tictactoe")),
        "{shown:?}"
    );
    assert!(shown.iter().any(|t| t.starts_with("connect4")), "{shown:?}");
    assert!(
        shown
            .iter()
            .all(|t| t.to_lowercase().contains("tictac") || t.starts_with("connect4")),
        "{shown:?}"
    );
    assert!(shown.len() < all, "nothing was filtered out: {shown:?}");
    // Enter (sent above) filtered without sending the form.
    assert_eq!(
        c.current_url().await.unwrap().path(),
        "/tournaments",
        "Enter in the filter box sent the form"
    );
    c.close().await.unwrap();
}

/// The live match page of each kind of board fits a 400 px screen, its board scaled to the
/// width: hexagons (hex), pieces that fall (connect four), chess, reversi, breakthrough,
/// tic-tac-toe, and a GDL-II seat's view of what it knows (blind breakthrough). Each match
/// is two people's, so its page is live at once (no player builds the rules' engine), and is
/// aborted once seen.
async fn boards_fit_a_phone(c: &Client, url: &str) {
    let corpus = ggp_testdata::shared_dir().is_some();
    let mut games = vec![
        ("tictactoe", "svg.board.square.checker"),
        ("connect4", "svg.board.square.plain"),
        ("breakthrough6", "svg.board.square.checker"),
    ];
    if corpus {
        games.extend([
            ("hex", "svg.board.hex"),
            ("reversi", "svg.board.square.checker"),
            ("breakthrough", "svg.board.square.checker"),
            ("chess", "svg.board.square.checker"),
        ]);
    }
    for (game, board) in games {
        let (status, created) = api(
            "POST",
            &format!("{url}/api/matches"),
            Some(ADMIN_TOKEN),
            Some(
                json!({"game": game, "players": ["human", "human"], "startclock": 1,
                        "playclock": 60}),
            ),
        );
        assert_eq!(status, 201, "{game}: {created}");
        let id = created["id"].as_str().unwrap();
        c.goto(&format!("{url}/matches/{id}")).await.unwrap();
        c.wait()
            .for_element(Locator::Css(&format!("#board {board} .cell")))
            .await
            .unwrap_or_else(|e| panic!("{game}: no {board}: {e}"));
        let past = overflow(c, 400).await;
        assert!(
            past <= 0,
            "{game}'s match page is {past} px wider than a 400 px screen"
        );
        // Its slot for the next.
        let (status, _) = api(
            "POST",
            &format!("{url}/api/matches/{id}/abort"),
            Some(ADMIN_TOKEN),
            None,
        );
        assert_eq!(status, 202, "{game}: the abort");
    }
    // A person's seat in a GDL-II game: the board of what it knows, the cells its pawns move from, to click.
    let (status, created) = api(
        "POST",
        &format!("{url}/api/matches"),
        Some(ADMIN_TOKEN),
        Some(
            json!({"game": "blindbreakthrough", "players": ["human", "random"],
                    "startclock": 1, "playclock": 60}),
        ),
    );
    assert_eq!(status, 201, "{created}");
    let seat_url = created["seats"][0]["url"].as_str().unwrap().to_string();
    c.goto(&format!("{url}{seat_url}")).await.unwrap();
    c.wait()
        .for_element(Locator::Css("#board.known svg.board .cell.from"))
        .await
        .expect("blind breakthrough: the seat's board with its moves' cells");
    assert!(c.find(Locator::Id("truth")).await.is_err(), "no true state");
    let past = overflow(c, 400).await;
    assert!(
        past <= 0,
        "blind breakthrough's seat page is {past} px wider than a 400 px screen"
    );
    // A move made on that board: a pawn, then where it goes. Once black has moved, unseen,
    // where its pawns are is no longer certain: those cells are shaded.
    c.find(Locator::Css("#board.known .cell.from"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    click(c, Locator::Css("#board.known .cell.to")).await;
    // Black's move, played by the server's random player, is recorded first (within the
    // play clock: a loaded machine may take long); then the page shows what white cannot be
    // sure of (the seat's stream, which the site test follows step by step, brings it).
    let record = format!("{url}/api/matches/{}", created["id"].as_str().unwrap());
    let recorded = Instant::now() + Duration::from_secs(60);
    loop {
        let moves = api("GET", &record, Some(ADMIN_TOKEN), None).1["moves"].clone();
        if moves.as_array().is_some_and(|m| m.len() >= 2) {
            break;
        }
        if Instant::now() > recorded {
            // What the seat's page said of its move (an error, say), for whoever reads this.
            let said = text_of(c, "#seat").await;
            panic!(
                "blind breakthrough's second step not recorded within 60 s: the seat says {said:?}; the moves recorded: {moves}"
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if c.wait()
        .for_element(Locator::Css("#board.known .cell.uncertain"))
        .await
        .is_err()
    {
        let board = text_of(c, "#board").await;
        let steps = api("GET", &record, Some(ADMIN_TOKEN), None).1["moves"].clone();
        panic!(
            "after black's unseen move, no cell white cannot be sure of; the page's board: \
             {board}; the moves recorded: {steps}"
        );
    }
    assert!(
        text_of(c, "#view-0 tbody").await.contains("(move "),
        "the move made from the board"
    );
}

/// A GDL-III game in the browser, on a phone (a 400 × 800 window): a person plays number
/// guessing's guesser from its seat's page, asking "is it less than N?" by the moves' buttons,
/// reading each answer in its view, and guesses once the page says it knows the number
/// ("you know (secret N)"): 100. The page never shows the number chosen, and fits the width.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_plays_a_gdl3_game_knowing_the_number() {
    let Some((chromedriver, chromium)) = tools("the GDL-III browser test") else {
        return;
    };
    let db = temp_db("browser-gdl3.sqlite");
    let games = workspace().join("games").display().to_string();
    let server = spawn_server(&db, &["--games", &games]);
    let driver = start_driver(&chromedriver);
    let c = browser(&driver, &chromium, (400, 800)).await;
    let (status, created) = api(
        "POST",
        &format!("{}/api/matches", server.url),
        Some(ADMIN_TOKEN),
        Some(
            json!({"game": "number_guessing", "players": ["human"], "startclock": 1,
                    "playclock": 60}),
        ),
    );
    assert_eq!(status, 201, "{created}");
    let seat_url = created["seats"][0]["url"].as_str().unwrap().to_string();
    c.goto(&format!("{}{seat_url}", server.url)).await.unwrap();
    // The guesser's rows: the random player's choice (it saw nothing), then an answer a step.
    let rows = "section.role-view tbody tr";
    let (mut lo, mut hi) = (1u32, 8u32);
    for question in 1..=3 {
        let m = (lo + hi).div_ceil(2);
        let button = format!("//div[@id='seat-moves']/button[text()='(ask {m})']");
        click(&c, Locator::XPath(&button)).await;
        let row = format!("{rows}:nth-child({}) code.percept", question + 1);
        let answer = c
            .wait()
            .for_element(Locator::Css(&row))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        match answer.as_str() {
            "yes" => hi = m - 1,
            "no" => lo = m,
            other => panic!("an answer to (ask {m}): {other:?}"),
        }
        let view = text_of(&c, "section.role-view tbody").await;
        if question < 3 {
            assert!(!view.contains("you know"), "{view}");
        }
        assert!(overflow(&c, 400).await <= 0, "the page fits 400 px");
    }
    assert_eq!(lo, hi, "three answers leave one number");
    let known = format!("you know (secret {lo})");
    until(10, "what the guesser knows", || async {
        text_of(&c, "section.role-view tbody")
            .await
            .contains(&known)
    })
    .await;
    let source = c.source().await.unwrap();
    assert!(
        !source.contains("(choose ") && !source.contains("(chosen "),
        "the number chosen is not on the page"
    );
    assert!(c.find(Locator::Id("truth")).await.is_err(), "no true state");
    let guess = format!("//div[@id='seat-moves']/button[text()='(guess {lo})']");
    click(&c, Locator::XPath(&guess)).await;
    until(10, "the end, seen as the guesser", || async {
        text_of(&c, "#seat-status")
            .await
            .starts_with("The match is over")
    })
    .await;
    let id = created["id"].as_str().unwrap();
    let (_, record) = api(
        "GET",
        &format!("{}/api/matches/{id}", server.url),
        None,
        None,
    );
    assert_eq!(record["status"], "finished", "{record}");
    assert_eq!(record["goalValues"], json!([100, 100]), "{record}");
    assert_eq!(record["moves"][0][0], format!("(choose {lo})"));
    assert!(
        overflow(&c, 400).await <= 0,
        "the finished page fits 400 px"
    );
    c.close().await.unwrap();
}
