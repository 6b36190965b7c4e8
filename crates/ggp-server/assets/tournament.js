// A tournament's page follows it: every two seconds, while it is not finished, the part with
// its progress, standings and matches is fetched again and put in place when it changed. When
// its status changes (paused, resumed, ended: here or elsewhere), the page is loaded again, so
// that its controls are those of the new status.

const live = () => document.getElementById('live');
const path = `${location.pathname.replace(/\/$/, '')}/live`;
let last = live()?.outerHTML;

async function refresh() {
  const current = live();
  if (!current || current.dataset.status === 'finished') return;
  try {
    const response = await fetch(path, { headers: { Accept: 'text/html' } });
    if (response.ok) {
      const html = await response.text();
      if (html !== last) {
        const holder = document.createElement('div');
        holder.innerHTML = html;
        const fresh = holder.firstElementChild;
        if (fresh) {
          if (fresh.dataset.status !== current.dataset.status) {
            location.reload();
            return;
          }
          current.replaceWith(fresh);
          last = html;
        }
      }
    }
  } catch {
    // The server is away for a moment: try again at the next tick.
  }
  setTimeout(refresh, 2000);
}

setTimeout(refresh, 2000);
