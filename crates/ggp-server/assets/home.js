// The dashboard follows what is played: every two seconds its live and recent matches are
// fetched again (`/dashboard/now`) and put in place where they changed, so that a match
// started after the page was opened shows without a reload.

let last = '';

async function refresh() {
  try {
    const response = await fetch('/dashboard/now', { headers: { Accept: 'text/html' } });
    if (response.ok) {
      const html = await response.text();
      if (html !== last) {
        const holder = document.createElement('div');
        holder.innerHTML = html;
        for (const fresh of holder.children) {
          document.getElementById(fresh.id)?.replaceWith(fresh);
        }
        last = html;
      }
    }
  } catch {
    // The server is away for a moment: try again at the next tick.
  }
  setTimeout(refresh, 2000);
}

setTimeout(refresh, 2000);
