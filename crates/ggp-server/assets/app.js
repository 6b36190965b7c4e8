// Small helpers of every page: tabs that switch panes, forms that send themselves when a choice
// changes (with a button in <noscript> for those without scripts), and filter boxes over lists
// of choices.

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

// A filter box (`input[data-filter]`) over the element with that id (a list of choices, the
// rows of a table, the options of a select): its items whose text does not contain what is typed are hidden, but for
// those with a checked box.
for (const box of document.querySelectorAll('input[data-filter]')) {
  const list = document.getElementById(box.dataset.filter);
  if (!list) continue;
  box.addEventListener('input', () => {
    const query = box.value.trim().toLowerCase();
    for (const item of list.children) {
      const checked = item.querySelector('input[type=checkbox]')?.checked;
      item.hidden = query !== '' && !checked && !item.textContent.toLowerCase().includes(query);
    }
  });
  // Enter filters; neither it nor the box's change sends the form the box is in, unless that
  // form is a search (the games' page: Enter searches on the server too).
  box.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !box.closest('form.search')) event.preventDefault();
  });
  box.addEventListener('change', (event) => event.stopPropagation());
}
