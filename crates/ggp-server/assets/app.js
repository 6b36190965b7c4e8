// Small helpers of every page: tabs that switch panes, and forms that send themselves when a
// choice changes (with a button in <noscript> for those without scripts).

for (const tabs of document.querySelectorAll('[data-tabs]')) {
  const buttons = [...tabs.querySelectorAll('button[data-show]')];
  for (const button of buttons) {
    button.addEventListener('click', () => {
      for (const b of buttons) {
        const pane = document.getElementById(b.dataset.show);
        const active = b === button;
        b.classList.toggle('active', active);
        if (pane) pane.hidden = !active;
      }
    });
  }
}

for (const form of document.querySelectorAll('form[data-autosubmit]')) {
  form.addEventListener('change', () => form.submit());
}
