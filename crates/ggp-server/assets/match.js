// The match page: follows the match's event stream (server-sent events), steps through its
// states with the slider, and lets whoever holds a seat's link (`?seat=K#seat=K&token=T`) play
// it by clicking the board or a move. In a GDL-II match it switches between the true state and
// each role's view; a seat's page of a GDL-II match being played shows only its role's view,
// read from the stream with the seat's token (`data-sight="role"`), with the board of what the
// role knows (cells it cannot be sure of shaded), and reloads when the match ends. Boards are
// SVG: each cell a `g.cell` with `data-x` (its column) and `data-y` (its row). Text from the
// server is set with `textContent`; only the fragments the server rendered
// (boards, rows of the moves and views tables) are set as HTML.

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

/// Server-sent events read with `fetch`, so that a seat's token goes in a header (an
/// `EventSource` cannot send one): calls `handlers[event]({data})`, resumes after the last id
/// when the connection drops, and `handlers.refused(message)` if the server says no.
function eventsWithToken(url, token, handlers) {
  let closed = false;
  let last = null;
  const control = new AbortController();
  (async () => {
    while (!closed) {
      try {
        const headers = { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' };
        if (last !== null) headers['Last-Event-ID'] = last;
        const r = await fetch(url, { headers, signal: control.signal });
        if (!r.ok) {
          const answer = await r.json().catch(() => ({}));
          handlers.refused?.(answer.error ?? `the server said ${r.status}`);
          return;
        }
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value.replaceAll('\r\n', '\n');
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let name = 'message';
            const data = [];
            for (const line of block.split('\n')) {
              if (line === '' || line.startsWith(':')) continue;
              const colon = line.indexOf(':');
              const field = colon < 0 ? line : line.slice(0, colon);
              let v = colon < 0 ? '' : line.slice(colon + 1);
              if (v.startsWith(' ')) v = v.slice(1);
              if (field === 'event') name = v;
              else if (field === 'data') data.push(v);
              else if (field === 'id') last = v;
            }
            if (data.length) handlers[name]?.({ data: data.join('\n') });
            if (closed) return;
          }
        }
      } catch (err) {
        if (closed) return;
      }
      if (!closed) await new Promise((resolve) => { setTimeout(resolve, 1000); });
    }
  })();
  return { close() { closed = true; control.abort(); } };
}

function follow() {
  const sight = root.dataset.sight ?? 'all';
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
  let latest = slider ? Number(slider.max) : Number(root.dataset.steps);
  let shown = latest;
  let following = true;
  if (board && slider) boards.set(latest, board.innerHTML);

  // The seat this page plays, from the link's fragment.
  const hash = new URLSearchParams(location.hash.slice(1));
  const seat = hash.has('seat') && hash.has('token')
    ? { index: Number(hash.get('seat')), token: hash.get('token') }
    : null;

  // ----- points of view (GDL-II): the true state, or what one role knows -----
  const tabs = document.querySelectorAll('nav.views button.view-tab');
  function view(which) {
    for (const t of tabs) t.classList.toggle('active', t.dataset.view === String(which));
    const truth = which === 'truth';
    for (const id of ['truth', 'truth-moves']) {
      const e = document.getElementById(id);
      if (e) e.hidden = !truth;
    }
    for (const v of document.querySelectorAll('section.role-view')) {
      v.hidden = truth || v.dataset.role !== String(which);
    }
  }
  for (const t of tabs) t.addEventListener('click', () => view(t.dataset.view));
  if (seat && tabs.length > 0) view(seat.index);
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
    if (label) label.textContent = `state ${shown} of ${latest}`;
  }

  function show(k) {
    if (!board) { latest = Math.max(latest, k); return; }
    if (!slider) {
      // A role's view: what it knows at the latest step.
      latest = Math.max(latest, k);
      if (boards.has(latest)) { board.innerHTML = boards.get(latest); decorate(); }
      return;
    }
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

  if (slider) {
    slider.addEventListener('input', () => show(Number(slider.value)));
    document.getElementById('first').addEventListener('click', () => show(0));
    document.getElementById('prev').addEventListener('click', () => show(shown - 1));
    document.getElementById('next').addEventListener('click', () => show(shown + 1));
    document.getElementById('latest').addEventListener('click', () => show(latest));
  }
  if (slider) document.addEventListener('keydown', (e) => {
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
    if (!board) return;
    for (const td of board.querySelectorAll('.cell')) {
      td.classList.remove('target', 'from', 'to', 'selected');
    }
    if (!turn || !following || sending) return;
    for (const t of turn.targets) {
      if (t.column !== undefined) {
        for (const td of board.querySelectorAll(`.cell[data-x="${CSS.escape(t.column)}"]`)) {
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
    return board.querySelector(`.cell[data-x="${CSS.escape(x)}"][data-y="${CSS.escape(y)}"]`);
  }

  board?.addEventListener('click', (e) => {
    const td = e.target.closest('.cell');
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
  if (root.dataset.live !== 'true') {
    if (seat) {
      const goals = [...document.querySelectorAll('td.goal')].map((td) => td.textContent);
      seatStatus.textContent = goals.some((g) => g !== '')
        ? `The match is over: ${goals.join(' – ')}.`
        : 'The match is over.';
    }
    return;
  }
  const handlers = {};
  const on = (name, f) => { handlers[name] = f; };
  const streamUrl = `/api/matches/${encodeURIComponent(id)}/events?html=1`;
  let es = null;

  on('step', (e) => {
    const s = JSON.parse(e.data);
    if (sight === 'progress') {
      document.getElementById('progress-steps').textContent = String(s.step);
      return;
    }
    if (sight === 'role') {
      if (s.board !== undefined) { boards.set(s.step, s.board); show(s.step); }
      const tbody = document.querySelector(`#view-${s.role} tbody`);
      if (tbody && !tbody.querySelector(`tr[data-step="${s.step}"]`)) {
        const tpl = document.createElement('template');
        tpl.innerHTML = s.row;
        tbody.append(tpl.content);
      }
      document.getElementById('progress-steps').textContent = String(s.step);
      return;
    }
    (s.views ?? []).forEach((row, r) => {
      const body = document.querySelector(`#view-${r} tbody`);
      if (body && !body.querySelector(`tr[data-step="${s.step}"]`)) {
        const tpl = document.createElement('template');
        tpl.innerHTML = row;
        body.append(tpl.content);
      }
    });
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

  on('begin', (e) => {
    // A role's view starts with what it knows of the initial state.
    const b = JSON.parse(e.data);
    if (sight === 'role' && b.board !== undefined) { boards.set(0, b.board); show(0); }
  });

  on('clock', (e) => {
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

  on('turn', (e) => {
    if (!seat) return;
    const t = JSON.parse(e.data);
    const mine = t.seats.find((s) => s.seat === seat.index);
    selected = null;
    if (mine) {
      turn = mine;
      if (!following) show(latest);
      offer(turn.moves, board ? 'Your move: click the board or choose one.' : 'Your move:');
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

  on('status', (e) => status(JSON.parse(e.data)));
  on('end', (e) => {
    es.close();
    const s = JSON.parse(e.data);
    status(s);
    deadline = null;
    clock.hidden = true;
    turn = null;
    decorate();
    root.dataset.live = 'false';
    root.dataset.over = s.status;
    // Nothing is left to abort.
    document.getElementById('abort-form')?.remove();
    if (seat) {
      seatMoves.replaceChildren();
      seatStatus.textContent = s.status === 'finished'
        ? `The match is over: ${s.goals.join(' – ')}.`
        : 'The match is over.';
    }
    // What was secret while it was played is public now: show it.
    if (sight !== 'all') setTimeout(() => location.reload(), 300);
  });

  if (sight === 'role' && seat) {
    // This role's view, from the beginning, with the seat's token.
    on('refused', (message) => { seatStatus.textContent = `This seat's view is refused: ${message}`; });
    es = eventsWithToken(streamUrl, seat.token, handlers);
  } else {
    es = new EventSource(`${streamUrl}&from=${latest}`);
    for (const [name, f] of Object.entries(handlers)) es.addEventListener(name, f);
  }
}
