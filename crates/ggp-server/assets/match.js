// The match page: follows the match's event stream (server-sent events), steps through its
// states with the slider, and lets whoever holds a seat's link (`#seat=K&token=T`) play it by
// clicking the board or a move. Text from the server is set with `textContent`; only the
// fragments the server rendered (boards, rows of the moves table) are set as HTML.

const root = document.getElementById('match');
const id = root.dataset.id;
const base = `/matches/${encodeURIComponent(id)}`;

if ('starting' in root.dataset) {
  // Not recorded yet: reload when it begins.
  const es = new EventSource(`/api/matches/${encodeURIComponent(id)}/events`);
  es.addEventListener('begin', () => { es.close(); location.reload(); });
  es.addEventListener('end', () => { es.close(); location.reload(); });
} else {
  follow();
}

function follow() {
  const board = document.getElementById('board');
  const slider = document.getElementById('slider');
  const label = document.getElementById('step-label');
  const tbody = document.querySelector('#moves tbody');
  const clock = document.getElementById('clock');
  const clockTime = document.getElementById('clock-time');
  const clockLabel = document.getElementById('clock-label');
  const seatPanel = document.getElementById('seat');
  const seatStatus = document.getElementById('seat-status');
  const seatMoves = document.getElementById('seat-moves');

  const boards = new Map();
  let latest = Number(slider.max);
  let shown = latest;
  let following = true;
  boards.set(latest, board.innerHTML);

  // The seat this page plays, from the link's fragment.
  const hash = new URLSearchParams(location.hash.slice(1));
  const seat = hash.has('seat') && hash.has('token')
    ? { index: Number(hash.get('seat')), token: hash.get('token') }
    : null;
  let turn = null; // the seat's awaited move: {step, moves, targets, deadline}
  let selected = null; // a cell chosen as a move's origin: [x, y]
  let sending = false;

  if (seat) {
    seatPanel.hidden = false;
    const role = document.querySelectorAll('table.players tbody tr')[seat.index];
    document.getElementById('seat-role').textContent =
      role ? role.querySelector('code').textContent : `seat ${seat.index}`;
    seatStatus.textContent = 'Waiting for the match…';
  }

  function setLabel() {
    label.textContent = `state ${shown} of ${latest}`;
  }

  function show(k) {
    k = Math.max(0, Math.min(latest, k));
    shown = k;
    following = k === latest;
    slider.value = String(k);
    setLabel();
    if (boards.has(k)) {
      board.innerHTML = boards.get(k);
      decorate();
    } else {
      fetch(`${base}/boards/${k}`).then((r) => (r.ok ? r.text() : Promise.reject(r.status)))
        .then((html) => {
          boards.set(k, html);
          if (shown === k) { board.innerHTML = html; decorate(); }
        })
        .catch(() => {});
    }
  }

  slider.addEventListener('input', () => show(Number(slider.value)));
  document.getElementById('first').addEventListener('click', () => show(0));
  document.getElementById('prev').addEventListener('click', () => show(shown - 1));
  document.getElementById('next').addEventListener('click', () => show(shown + 1));
  document.getElementById('latest').addEventListener('click', () => show(latest));
  document.addEventListener('keydown', (e) => {
    if (e.target instanceof HTMLInputElement && e.target !== slider) return;
    if (e.key === 'ArrowLeft') { show(shown - 1); e.preventDefault(); }
    if (e.key === 'ArrowRight') { show(shown + 1); e.preventDefault(); }
  });
  setLabel();

  // ----- the clock -----
  let deadline = null;
  setInterval(() => {
    if (deadline === null) return;
    const left = Math.max(0, deadline - Date.now());
    clockTime.textContent = `${(left / 1000).toFixed(1)} s`;
    clock.classList.toggle('low', left < 5000);
  }, 100);
  if (clock.dataset.deadline) {
    deadline = Number(clock.dataset.deadline);
  }

  // ----- playing -----
  const cellOf = (td) => [td.dataset.x, td.dataset.y];
  const same = (a, b) => a && b && a[0] === b[0] && a[1] === b[1];

  function decorate() {
    for (const td of board.querySelectorAll('td.cell')) {
      td.classList.remove('target', 'from', 'to', 'selected');
    }
    if (!turn || !following || sending) return;
    for (const t of turn.targets) {
      if (t.column !== undefined) {
        for (const td of board.querySelectorAll(`td.cell[data-x="${CSS.escape(t.column)}"]`)) {
          td.classList.add('target');
        }
      } else if (t.cells.length === 1) {
        cell(t.cells[0])?.classList.add('target');
      } else if (selected && same(t.cells[0], selected)) {
        cell(t.cells[t.cells.length - 1])?.classList.add('to');
      } else if (!selected) {
        cell(t.cells[0])?.classList.add('from');
      }
    }
    if (selected) cell(selected)?.classList.add('selected');
  }

  function cell([x, y]) {
    return board.querySelector(`td.cell[data-x="${CSS.escape(x)}"][data-y="${CSS.escape(y)}"]`);
  }

  board.addEventListener('click', (e) => {
    const td = e.target.closest('td.cell');
    if (!td || !turn || !following || sending) return;
    const here = cellOf(td);
    const targets = turn.targets;
    let choices = [];
    if (selected) {
      choices = targets.filter((t) => t.cells.length >= 2 && same(t.cells[0], selected)
        && same(t.cells[t.cells.length - 1], here));
    }
    if (choices.length === 0) {
      choices = targets.filter((t) => (t.cells.length === 1 && same(t.cells[0], here))
        || (t.column !== undefined && t.column === here[0]));
    }
    if (choices.length === 1) {
      selected = null;
      send(choices[0].move);
    } else if (choices.length > 1) {
      selected = null;
      offer(choices.map((t) => t.move), 'Which one?');
    } else if (targets.some((t) => t.cells.length >= 2 && same(t.cells[0], here))) {
      selected = same(selected, here) ? null : here;
      offer(turn.moves, selected ? 'Now click where it goes, or choose a move:' : 'Your move:');
    } else {
      selected = null;
      offer(turn.moves, 'Your move:');
    }
    decorate();
  });

  function offer(moves, text) {
    seatStatus.textContent = text;
    seatMoves.replaceChildren(...moves.map((m) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'move';
      b.textContent = m;
      b.addEventListener('click', () => send(m));
      return b;
    }));
  }

  async function send(move) {
    if (!turn || sending) return;
    sending = true;
    const step = turn.step;
    seatStatus.textContent = `Sending ${move}…`;
    seatMoves.replaceChildren();
    decorate();
    try {
      const r = await fetch(`/api/matches/${encodeURIComponent(id)}/moves`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${seat.token}` },
        body: JSON.stringify({ move, step: turn.step, seat: seat.index }),
      });
      const answer = await r.json().catch(() => ({}));
      if (r.ok) {
        // The next turn may have arrived while the answer was on its way: keep it.
        if (turn && turn.step === step) {
          turn = null;
          seatStatus.textContent = `You played ${answer.move ?? move}.`;
        }
      } else {
        seatStatus.textContent = answer.error ?? `The move was refused (${r.status}).`;
        if (turn) offer(turn.moves, seatStatus.textContent);
      }
    } catch (err) {
      seatStatus.textContent = `The move could not be sent: ${err}`;
      if (turn) offer(turn.moves, seatStatus.textContent);
    } finally {
      sending = false;
      decorate();
    }
  }

  // ----- the stream -----
  if (root.dataset.live !== 'true') return;
  const es = new EventSource(`/api/matches/${encodeURIComponent(id)}/events?html=1&from=${latest}`);

  es.addEventListener('step', (e) => {
    const s = JSON.parse(e.data);
    boards.set(s.step, s.board);
    if (s.step > latest) {
      latest = s.step;
      slider.max = String(latest);
    }
    if (!document.getElementById(`step-${s.step}`)) {
      const tpl = document.createElement('template');
      tpl.innerHTML = s.row;
      tbody.append(tpl.content);
      s.errors.forEach((err, k) => {
        if (!err) return;
        const td = document.querySelector(`td.errors[data-role="${k}"]`);
        if (td) td.textContent = String(Number(td.textContent) + 1);
      });
    }
    if (following) show(latest); else setLabel();
  });

  es.addEventListener('clock', (e) => {
    const c = JSON.parse(e.data);
    if (c.phase === null) {
      deadline = null;
      clock.hidden = true;
      return;
    }
    deadline = c.deadline + (Date.now() - c.now);
    clockLabel.textContent = `${c.phase} clock`;
    clock.hidden = false;
  });

  es.addEventListener('turn', (e) => {
    if (!seat) return;
    const t = JSON.parse(e.data);
    const mine = t.seats.find((s) => s.seat === seat.index);
    selected = null;
    if (mine) {
      turn = mine;
      if (!following) show(latest);
      offer(turn.moves, 'Your move: click the board or choose one.');
    } else {
      turn = null;
      if (!sending) {
        seatMoves.replaceChildren();
        if (!seatStatus.textContent.startsWith('You played')) {
          seatStatus.textContent = 'Waiting for the other players…';
        }
      }
    }
    decorate();
  });

  function status(s) {
    const badge = document.createElement('span');
    badge.className = `status ${s.status}`;
    badge.textContent = s.status;
    document.getElementById('status').replaceChildren(badge);
    if (s.status === 'finished') {
      s.goals.forEach((g, k) => {
        const td = document.querySelector(`td.goal[data-role="${k}"]`);
        if (td) td.textContent = String(g);
      });
    }
    if (s.status === 'aborted' || s.status === 'failed') {
      const p = document.getElementById('abort-reason-live');
      p.textContent = `Aborted: ${s.abortReason ?? s.error ?? 'no reason was recorded'}`;
      p.hidden = false;
    }
  }

  es.addEventListener('status', (e) => status(JSON.parse(e.data)));
  es.addEventListener('end', (e) => {
    es.close();
    const s = JSON.parse(e.data);
    status(s);
    deadline = null;
    clock.hidden = true;
    turn = null;
    decorate();
    root.dataset.live = 'false';
    root.dataset.over = s.status;
    if (seat) {
      seatMoves.replaceChildren();
      seatStatus.textContent = s.status === 'finished'
        ? `The match is over: ${s.goals.join(' – ')}.`
        : 'The match is over.';
    }
  });
}
